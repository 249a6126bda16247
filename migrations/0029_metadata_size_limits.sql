-- A stored record's metadata is bounded in size as well as in keys (migration 0006): each request is
-- bounded by BODY_LIMIT, but merges add up, and ten PATCHes of 1 MiB made a 9 MB handoff record that every
-- reader's process then kept in memory. At most 5 MiB (5,242,880 bytes, the default BODY_LIMIT) of JSON text
-- as PostgreSQL prints it (MAX_METADATA_BYTES in src/domain/limits.ts). A violation (SQLSTATE 23514 naming the constraint) is
-- answered 422 and changes nothing. NOT VALID: rows written before are not re-checked, only new writes.
ALTER TABLE call_handoffs ADD CONSTRAINT call_handoffs_metadata_size
  CHECK (octet_length(metadata::text) <= 5242880) NOT VALID;
--> statement-breakpoint
ALTER TABLE conversations ADD CONSTRAINT conversations_metadata_size
  CHECK (octet_length(metadata::text) <= 5242880) NOT VALID;
