-- The events trigger of 0009 sent a NOTIFY from every transaction that wrote events: every call write. A
-- transaction that has notified takes one database-wide lock at commit and keeps it through its WAL flush,
-- so those commits ran one at a time, never grouped (issue 16: 280 of 350 sampled backends waiting on it
-- under ten concurrent creates; 910 creates/s against 1,270 with no NOTIFY). Now only a transaction that
-- gets the advisory lock below notifies; one that runs beside it relies on that one's wake-up. The fan-out
-- that wake-up starts may read before the other commits, so the fan-out keeps running for a moment after a
-- wake-up (src/worker/webhook-dispatcher.ts), and its poll remains the net.
CREATE OR REPLACE FUNCTION events_notify() RETURNS trigger AS $$
BEGIN
  -- Any fixed key; held to the end of the transaction, like the commit lock it spares the others.
  IF pg_try_advisory_xact_lock(7416302552) THEN
    PERFORM pg_notify('call_handoff_changed', '*events');
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
