-- A final call-handoff record never changes again, whatever code writes to it: the database refuses.
-- Every change moves `version` (the ETag) and `updated_at` forward, even two changes in one microsecond.
CREATE FUNCTION call_handoffs_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.final THEN
    RAISE EXCEPTION 'call handoff record % is final', OLD.id USING ERRCODE = 'CQ409';
  END IF;
  IF NEW.company_id <> OLD.company_id OR NEW.id <> OLD.id OR NEW.created_at <> OLD.created_at THEN
    RAISE EXCEPTION 'identity of call handoff record % cannot change', OLD.id USING ERRCODE = 'CQ409';
  END IF;
  NEW.version := OLD.version + 1;
  NEW.updated_at := greatest(clock_timestamp(), OLD.updated_at + interval '1 microsecond');
  IF NEW.final THEN
    NEW.finalized_at := NEW.updated_at;
  ELSE
    NEW.finalized_at := NULL;
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER call_handoffs_guard BEFORE UPDATE ON call_handoffs
  FOR EACH ROW EXECUTE FUNCTION call_handoffs_guard();
--> statement-breakpoint
CREATE FUNCTION call_handoffs_no_delete_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.final THEN
    RAISE EXCEPTION 'call handoff record % is final', OLD.id USING ERRCODE = 'CQ409';
  END IF;
  RETURN OLD;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER call_handoffs_no_delete_final BEFORE DELETE ON call_handoffs
  FOR EACH ROW EXECUTE FUNCTION call_handoffs_no_delete_final();
