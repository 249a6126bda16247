-- The webhook fan-out starts reading the event log at its beginning.
INSERT INTO "webhook_dispatch" ("id", "txid", "seq") VALUES (1, '0', 0) ON CONFLICT DO NOTHING;
--> statement-breakpoint
-- Wakes the webhook fan-out of every process when events commit (NOTIFY is delivered at commit, and once
-- per transaction and payload however many rows). It uses the notifier's channel with the key "*events".
CREATE OR REPLACE FUNCTION events_notify() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('call_handoff_changed', '*events');
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER events_notify AFTER INSERT ON "events" FOR EACH STATEMENT EXECUTE FUNCTION events_notify();
