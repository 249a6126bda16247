/**
 * Call-handoff records. Every query is filtered by company, except the service-wide stale sweep. Writes
 * are single UPDATE statements whose new metadata is computed from the row's current value inside the
 * statement, so concurrent writers queue on the row lock and none loses another's keys; the
 * `call_handoffs_guard` trigger (migration 0001) refuses any change to a final record with CQ409.
 */
import { and, eq, type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { Db } from '../database.ts';
import { rowsOf } from '../prepared.ts';
import { callHandoffs } from '../schema.ts';

/** A record as the repository returns it; times are ISO 8601 strings in UTC with microseconds. */
export interface HandoffRow {
  companyId: string;
  id: string;
  /** The call the record is linked to, or null. */
  conversationUuid: string | null;
  metadata: Record<string, unknown>;
  final: boolean;
  /** Moves on every change (the trigger bumps it); the ETag is made from it. */
  version: number;
  createdAt: string;
  updatedAt: string;
  finalizedAt: string | null;
}

/** A top-level metadata patch: a null value removes the key. */
export type MetadataPatch = Record<string, unknown>;

// Microseconds, not JavaScript's milliseconds: the trigger moves updated_at by at least 1 µs per change,
// and two changes within one millisecond must still show two different updated_at values.
function iso(column: AnyPgColumn): SQL<string> {
  return sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

const ROW = {
  companyId: callHandoffs.companyId,
  id: callHandoffs.id,
  conversationUuid: callHandoffs.conversationUuid,
  metadata: sql<Record<string, unknown>>`${callHandoffs.metadata}`,
  final: callHandoffs.final,
  version: callHandoffs.version,
  createdAt: iso(callHandoffs.createdAt),
  updatedAt: iso(callHandoffs.updatedAt),
  finalizedAt: sql<string | null>`${iso(callHandoffs.finalizedAt)}`,
};

/**
 * `base` with the patch's top-level keys set, and those whose value is null removed, in one expression.
 * Rebuilt from the pairs of `base || patch` that are not null: linear in the keys (`jsonb - text[]`
 * compares every key with every removed one, and 100,000 removals took half a minute).
 */
function merged(base: SQL | AnyPgColumn, patch: MetadataPatch): SQL {
  const json = JSON.stringify(patch);
  return sql`(select coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb) from jsonb_each(${base} || ${json}::jsonb) as e where e.value <> 'null'::jsonb)`;
}

function byId(companyId: string, id: string): SQL | undefined {
  return and(eq(callHandoffs.companyId, companyId), eq(callHandoffs.id, id));
}

/** Inserts a new, partial record. */
export async function insertHandoff(
  db: Db,
  companyId: string,
  values: { metadata: MetadataPatch; conversationUuid: string | undefined },
): Promise<HandoffRow> {
  const [row] = await db
    .insert(callHandoffs)
    .values({
      companyId,
      metadata: merged(sql`'{}'::jsonb`, values.metadata),
      conversationUuid: values.conversationUuid ?? null,
    })
    .returning(ROW);
  return row as HandoffRow;
}

/** The record with this id in this company. */
export async function findHandoff(db: Db, companyId: string, id: string): Promise<HandoffRow | undefined> {
  const [row] = await db.select(ROW).from(callHandoffs).where(byId(companyId, id));
  return row;
}

/** Merges a patch into the record's metadata; undefined when there is no such record. CQ409 when final. */
export async function mergeHandoffMetadata(
  db: Db,
  companyId: string,
  id: string,
  patch: MetadataPatch,
): Promise<HandoffRow | undefined> {
  const [row] = await db
    .update(callHandoffs)
    .set({ metadata: merged(callHandoffs.metadata, patch) })
    .where(byId(companyId, id))
    .returning(ROW);
  return row;
}

/**
 * Finalizes the record, after merging `patch` when one is given. Without a patch a record that is already
 * final is left alone and undefined is returned (as for an unknown record); with one it is CQ409.
 */
export async function finalizeHandoff(
  db: Db,
  companyId: string,
  id: string,
  patch: MetadataPatch | undefined,
): Promise<HandoffRow | undefined> {
  if (patch === undefined) {
    const [row] = await db
      .update(callHandoffs)
      .set({ final: true })
      .where(and(byId(companyId, id), eq(callHandoffs.final, false)))
      .returning(ROW);
    return row;
  }
  const [row] = await db
    .update(callHandoffs)
    .set({ metadata: merged(callHandoffs.metadata, patch), final: true })
    .where(byId(companyId, id))
    .returning(ROW);
  return row;
}

/**
 * Finalizes up to `limit` records of any company that were created more than `staleAfterSeconds` ago and
 * are still partial; returns them. Rows a writer holds right now are skipped (SKIP LOCKED) and left for the
 * next sweep, so sweeps of several processes never wait on writers or on each other. The records are
 * picked in a MATERIALIZED CTE, evaluated once, for the reason the queue's claim is (queue.ts): as
 * `(company_id, id) in (select … limit … for update skip locked)` a batch finalized every stale record.
 */
export async function finalizeStaleHandoffs(
  db: Db,
  staleAfterSeconds: number,
  limit: number,
): Promise<{ companyId: string; id: string; conversationUuid: string | null }[]> {
  const result = await db.execute(sql`
    with stale as materialized (
      select company_id, id from call_handoffs
        where not final and created_at < now() - make_interval(secs => ${staleAfterSeconds})
        order by created_at
        limit ${limit}
        for update skip locked)
    update call_handoffs h set final = true
      from stale
      where h.company_id = stale.company_id and h.id = stale.id and not h.final
      returning h.company_id, h.id, h.conversation_uuid`);
  return rowsOf(result).map((row) => ({
    companyId: String(row.company_id),
    id: String(row.id),
    conversationUuid: row.conversation_uuid == null ? null : String(row.conversation_uuid),
  }));
}
