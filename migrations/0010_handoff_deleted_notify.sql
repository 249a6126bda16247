-- Every process caches final handoff records in memory; an erasure deletes them (final ones included), so
-- each process must hear of a deletion to forget its copy. A DELETE also notifies '*deleted:<company_id>:<id>'
-- on the same channel: the caches react to that key only, not to the plain '<company_id>:<id>' an UPDATE
-- (a finalize) also sends, which may arrive after a later read of the final record began.
CREATE OR REPLACE FUNCTION call_handoffs_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('call_handoff_changed', OLD.company_id::text || ':' || OLD.id::text);
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('call_handoff_changed', '*deleted:' || OLD.company_id::text || ':' || OLD.id::text);
  END IF;
  RETURN NULL;
END;
$$;
