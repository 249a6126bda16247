/**
 * Call-handoff records. Every query is filtered by company, except the service-wide stale sweep. Writes
 * are single statements whose new metadata is computed from the row's current value inside the
 * statement, so concurrent writers queue on the row lock and none loses another's keys; the
 * `call_handoffs_guard` trigger (migration 0001) refuses any change to a final record with CQ409. Each
 * write also writes its event (decision 27) in that statement: `handoff.created` for an insert,
 * `handoff.updated` for a merge, `handoff.finalized` for a finalize; one round trip, no transaction.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { Db } from '../database.ts';
import { rowsOf } from '../prepared.ts';
import { callRefJson } from './events.ts';

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
function iso(column: SQL): SQL<string> {
  return sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/** The columns of a record as `toRow` reads them, from call_handoffs or a CTE of its rows. */
const COLUMNS = sql`company_id::text, id::text, conversation_uuid::text, metadata, final, version,
  ${iso(sql`created_at`)} as created_at, ${iso(sql`updated_at`)} as updated_at,
  ${iso(sql`finalized_at`)} as finalized_at`;

/** A row of COLUMNS as the repository returns it (its jsonb parsed, should the driver give it as text). */
function toRow(row: Record<string, unknown>): HandoffRow {
  const metadata = typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata;
  return {
    companyId: String(row.company_id),
    id: String(row.id),
    conversationUuid: row.conversation_uuid == null ? null : String(row.conversation_uuid),
    metadata: metadata as MetadataPatch,
    final: row.final === true,
    version: Number(row.version),
    createdAt: String(row.created_at),
    updatedAt: String(row.updated_at),
    finalizedAt: row.finalized_at == null ? null : String(row.finalized_at),
  };
}

/**
 * `base` with the patch's top-level keys set, and those whose value is null removed, in one expression.
 * Rebuilt from the pairs of `base || patch` that are not null: linear in the keys (`jsonb - text[]`
 * compares every key with every removed one, and 100,000 removals took half a minute).
 */
function merged(base: SQL, patch: MetadataPatch): SQL {
  const json = JSON.stringify(patch);
  return sql`(select coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb) from jsonb_each(${base} || ${json}::jsonb) as e where e.value <> 'null'::jsonb)`;
}

/** The event type each kind of write tells of. */
type HandoffEventType = 'handoff.created' | 'handoff.updated' | 'handoff.finalized';

/**
 * Runs `write`, an INSERT or UPDATE of call_handoffs without its RETURNING, and in the same statement one
 * event of `type` per row it wrote: `handoff_id`, `final`, and the call's ids when the record is linked to
 * one. `ctes` go before it (the stale sweep's pick). Returns the rows written.
 */
async function writeWithEvents(
  db: Db,
  type: HandoffEventType,
  write: SQL,
  ctes?: SQL,
): Promise<HandoffRow[]> {
  const result = await db.execute(sql`
    with ${ctes ?? sql``} w as (${write} returning call_handoffs.*),
    e as (
      insert into events (company_id, type, data)
        select w.company_id, ${type}, jsonb_build_object('handoff_id', w.id, 'final', w.final)
            || coalesce(${callRefJson(sql`w.company_id`, sql`w.conversation_uuid`)}, '{}'::jsonb)
          from w
    )
    select ${COLUMNS} from w`);
  return rowsOf(result).map(toRow);
}

/** Inserts a new, partial record, and its `handoff.created`. */
export async function insertHandoff(
  db: Db,
  companyId: string,
  values: { metadata: MetadataPatch; conversationUuid: string | undefined },
): Promise<HandoffRow> {
  const [row] = await writeWithEvents(
    db,
    'handoff.created',
    sql`insert into call_handoffs (company_id, metadata, conversation_uuid)
      values (${companyId}, ${merged(sql`'{}'::jsonb`, values.metadata)}, ${values.conversationUuid ?? null})`,
  );
  return row as HandoffRow;
}

/** The record with this id in this company. */
export async function findHandoff(db: Db, companyId: string, id: string): Promise<HandoffRow | undefined> {
  const result = await db.execute(
    sql`select ${COLUMNS} from call_handoffs where company_id = ${companyId} and id = ${id}`,
  );
  const [row] = rowsOf(result);
  return row ? toRow(row) : undefined;
}

/**
 * Merges a patch into the record's metadata, and writes its `handoff.updated`; undefined when there is no
 * such record. CQ409 when final.
 */
export async function mergeHandoffMetadata(
  db: Db,
  companyId: string,
  id: string,
  patch: MetadataPatch,
): Promise<HandoffRow | undefined> {
  const [row] = await writeWithEvents(
    db,
    'handoff.updated',
    sql`update call_handoffs set metadata = ${merged(sql`metadata`, patch)}
      where company_id = ${companyId} and id = ${id}`,
  );
  return row;
}

/**
 * Finalizes the record, after merging `patch` when one is given, and writes its `handoff.finalized`.
 * Without a patch a record that is already final is left alone and undefined is returned (as for an
 * unknown record), with no event; with one it is CQ409.
 */
export async function finalizeHandoff(
  db: Db,
  companyId: string,
  id: string,
  patch: MetadataPatch | undefined,
): Promise<HandoffRow | undefined> {
  const [row] = await writeWithEvents(
    db,
    'handoff.finalized',
    patch === undefined
      ? sql`update call_handoffs set final = true
          where company_id = ${companyId} and id = ${id} and not final`
      : sql`update call_handoffs set metadata = ${merged(sql`metadata`, patch)}, final = true
          where company_id = ${companyId} and id = ${id}`,
  );
  return row;
}

/**
 * Finalizes up to `limit` records of any company that were created more than `staleAfterSeconds` ago and
 * are still partial, with a `handoff.finalized` each; returns them. Rows a writer holds right now are
 * skipped (SKIP LOCKED) and left for the next sweep, so sweeps of several processes never wait on writers
 * or on each other. The records are picked in a MATERIALIZED CTE, evaluated once, for the reason the
 * queue's claim is (queue.ts): as `(company_id, id) in (select … limit … for update skip locked)` a batch
 * finalized every stale record.
 */
export async function finalizeStaleHandoffs(
  db: Db,
  staleAfterSeconds: number,
  limit: number,
): Promise<HandoffRow[]> {
  return writeWithEvents(
    db,
    'handoff.finalized',
    sql`update call_handoffs set final = true
      from stale
      where call_handoffs.company_id = stale.company_id and call_handoffs.id = stale.id
        and not call_handoffs.final`,
    sql`stale as materialized (
      select company_id, id from call_handoffs
        where not final and created_at < now() - make_interval(secs => ${staleAfterSeconds})
        order by created_at
        limit ${limit}
        for update skip locked),`,
  );
}
