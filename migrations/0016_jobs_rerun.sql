-- A job enqueued again (rerunIfRunning) while it runs is flagged, and queued once more when it completes: a
-- webhook delivery job that made its last claim just before new deliveries committed no longer leaves them
-- waiting for the next poll.
ALTER TABLE "jobs" ADD COLUMN "rerun" boolean DEFAULT false NOT NULL;
