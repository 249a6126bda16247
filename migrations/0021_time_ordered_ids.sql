-- The ids of the tables that grow with the calls are UUIDs of version 7 (RFC 9562) instead of version 4
-- (issue 16): the first 48 bits are the Unix time in milliseconds, the rest random as before (74 bits).
-- A random id lands on a random leaf of every index that holds it (each table's primary key, the
-- tags', analyses' and uploads' keys on conversation_uuid), so with a million calls stored a create touched
-- pages all over those indexes: pages to read when they no longer fit in memory, and after each checkpoint
-- a full 8 kB page image written to the WAL for the first change of every page. Measured on a million
-- stored calls, inserting 2,000 calls one at a time after a checkpoint: 5.4-6.3 kB of WAL and 0.76-0.88
-- page images per call with random ids, 0.8-1.3 kB and 0.08-0.16 with these. Rows stored before keep
-- their ids; the two kinds mix in one index without harm. A SQL function, so the planner inlines it.
CREATE FUNCTION cqs_uuid_v7() RETURNS uuid LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
  SELECT encode(
    set_bit(set_bit(
      overlay(uuid_send(gen_random_uuid())
        PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
        FROM 1 FOR 6),
      52, 1), 53, 1),
    'hex')::uuid
$$;--> statement-breakpoint
ALTER TABLE "conversations" ALTER COLUMN "id" SET DEFAULT cqs_uuid_v7();--> statement-breakpoint
ALTER TABLE "events" ALTER COLUMN "id" SET DEFAULT cqs_uuid_v7();--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ALTER COLUMN "id" SET DEFAULT cqs_uuid_v7();--> statement-breakpoint
ALTER TABLE "call_handoffs" ALTER COLUMN "id" SET DEFAULT cqs_uuid_v7();
