-- One request may send at most 1,000 top-level metadata keys (the HTTP schemas); merges add up, so each
-- stored record is bounded as well: at most 1,000 top-level keys in a call's or a handoff record's
-- metadata (MAX_METADATA_KEYS in src/http/schemas/common.ts). A violation (SQLSTATE 23514 naming the
-- constraint) is answered 422. NOT VALID: rows written before are not re-checked, only new writes.
CREATE FUNCTION cqs_jsonb_top_level_keys(j jsonb) RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN jsonb_typeof(j) = 'object' THEN (SELECT count(*)::integer FROM jsonb_object_keys(j)) ELSE 0 END
$$;
--> statement-breakpoint
ALTER TABLE call_handoffs ADD CONSTRAINT call_handoffs_metadata_keys
  CHECK (cqs_jsonb_top_level_keys(metadata) <= 1000) NOT VALID;
--> statement-breakpoint
ALTER TABLE conversations ADD CONSTRAINT conversations_metadata_keys
  CHECK (cqs_jsonb_top_level_keys(metadata) <= 1000) NOT VALID;
