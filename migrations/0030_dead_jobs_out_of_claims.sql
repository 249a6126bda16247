-- A dead job (its attempts spent, no lease) is due at infinity from now on (the queue's `fail`), past the end
-- of every claim's range of jobs_due_idx; the dead jobs kept so far are moved there too. Left at their last
-- run time, every claim walked all of them and filtered them out: 110,000 dead jobs made an empty claim
-- 21 ms on PostgreSQL and 30 ms of the event loop on PGlite.
UPDATE jobs SET run_at = 'infinity' WHERE attempts >= max_attempts AND locked_until IS NULL;
