-- conversations.latest_upload_id/status follow the call's newest upload (highest id) in the same
-- transaction as any change of it, whatever code made the change: the list filters on `media` by an index.
CREATE FUNCTION uploads_track_latest() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE conversations SET latest_upload_id = NEW.id, latest_upload_status = NEW.status
      WHERE company_id = NEW.company_id AND id = NEW.conversation_uuid
        AND (latest_upload_id IS NULL OR latest_upload_id < NEW.id);
  ELSIF NEW.status IS DISTINCT FROM OLD.status THEN
    UPDATE conversations SET latest_upload_status = NEW.status
      WHERE company_id = NEW.company_id AND id = NEW.conversation_uuid AND latest_upload_id = NEW.id;
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER uploads_track_latest AFTER INSERT OR UPDATE OF status ON uploads
  FOR EACH ROW EXECUTE FUNCTION uploads_track_latest();
--> statement-breakpoint
UPDATE conversations c SET latest_upload_id = u.id, latest_upload_status = u.status
  FROM (SELECT DISTINCT ON (company_id, conversation_uuid) company_id, conversation_uuid, id, status
          FROM uploads ORDER BY company_id, conversation_uuid, id DESC) u
  WHERE c.company_id = u.company_id AND c.id = u.conversation_uuid;
--> statement-breakpoint
-- A final handoff record may be deleted only by an erasure (decision 26), which sets the
-- transaction-local `cqs.erasing` to 'on'. Updates of final records stay refused (call_handoffs_guard).
CREATE OR REPLACE FUNCTION call_handoffs_no_delete_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.final AND coalesce(current_setting('cqs.erasing', true), '') <> 'on' THEN
    RAISE EXCEPTION 'call handoff record % is final', OLD.id USING ERRCODE = 'CQ409';
  END IF;
  RETURN OLD;
END;
$$;
