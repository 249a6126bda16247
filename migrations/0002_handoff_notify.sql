-- Long polls of call-handoff records wake on a change whatever wrote it (an API write, the stale-record
-- sweep, an operator's SQL): every committed UPDATE or DELETE notifies `call_handoff_changed` with
-- '<company_id>:<id>'. NOTIFY is transactional, so a listener hears of a change only once it is visible.
CREATE FUNCTION call_handoffs_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('call_handoff_changed', OLD.company_id::text || ':' || OLD.id::text);
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER call_handoffs_notify AFTER UPDATE OR DELETE ON call_handoffs
  FOR EACH ROW EXECUTE FUNCTION call_handoffs_notify();
