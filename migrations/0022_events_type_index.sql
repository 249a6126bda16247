-- The event feed with a type filter (decision 27's `type`) reads the events of that type in log order
-- (issue 16). Without it a poll walked every event of the company after its cursor, checking each one's
-- type: on a log of a million events, a poll for a type none of them had took 110 ms (a sequential scan),
-- and it grows with the log (at 30 days' retention, a busy company's log could outgrow
-- DB_STATEMENT_TIMEOUT). The planner still reads the log's own order when the types asked for are common.
-- The price: an event's insert writes one entry more, measured at 4-7 us on top of 53 us. An upgrade
-- builds it once, while the migrating process starts: 2.8 s for a million events on the bench's machine.
CREATE INDEX "events_company_type_position_idx" ON "events" USING btree ("company_id","type","txid","seq");