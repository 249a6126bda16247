/**
 * Call-handoff records, the writer side (decision 18): create, merge, finalize. Each write is one
 * statement, which writes its event too (decision 27), and goes through the database's guard trigger, so
 * "final means immutable" holds whoever writes; a write to a final record fails there with CQ409, which
 * the adapters turn into a ConflictError.
 */
import type { Db } from '../../adapters/db/database.ts';
import {
  finalizeHandoff,
  finalizeStaleHandoffs,
  findHandoff,
  type HandoffRow,
  insertHandoff,
  type MetadataPatch,
  mergeHandoffMetadata,
} from '../../adapters/db/repositories/call-handoffs.ts';
import type { Principal } from '../access/principal.ts';
import { NotFoundError } from '../errors.ts';
import { resolveHandoffConversation } from './conversation.ts';
import type { FinalRecordCache } from './final-cache.ts';

/** A record as the API shows it (spec 2.6): all six fields, always. */
export interface HandoffView {
  handoff_id: string;
  final: boolean;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  finalized_at: string | null;
}

/** A record and its version, from which the HTTP edge makes the ETag. */
export interface Handoff {
  view: HandoffView;
  version: number;
}

/** What the create endpoint accepts. */
export interface CreateHandoffInput {
  metadata?: MetadataPatch | undefined;
  conversation_id?: string | undefined;
  agent_email?: string | undefined;
}

/** Turns a repository row into the API's record. */
export function toHandoff(row: HandoffRow): Handoff {
  return {
    version: row.version,
    view: {
      handoff_id: row.id,
      final: row.final,
      metadata: row.metadata,
      created_at: row.createdAt,
      updated_at: row.updatedAt,
      finalized_at: row.finalizedAt,
    },
  };
}

/** The cache of records this process reads, told of its own writes at once (see `final-cache.ts`). */
export type RecordForgetter = Pick<FinalRecordCache, 'forget'>;

function notFound(id: string): NotFoundError {
  return new NotFoundError(`call handoff record ${id} not found`);
}

/** Creates a partial record, optionally linked to a conversation of the caller's company. */
export async function createHandoff(
  db: Db,
  principal: Principal,
  input: CreateHandoffInput,
): Promise<Handoff> {
  // A call erased between the look-up and the insert fails the insert's foreign key: a NotFoundError.
  const conversationUuid = await resolveHandoffConversation(db, principal, input);
  const row = await insertHandoff(db, principal.companyId, {
    metadata: input.metadata ?? {},
    conversationUuid,
  });
  return toHandoff(row);
}

/** Merges top-level keys into a partial record's metadata (null removes a key); every call is a change. */
export async function mergeHandoff(
  db: Db,
  principal: Principal,
  id: string,
  metadata: MetadataPatch,
  cache?: RecordForgetter,
): Promise<Handoff> {
  const row = await mergeHandoffMetadata(db, principal.companyId, id, metadata);
  if (!row) throw notFound(id);
  const handoff = toHandoff(row);
  cache?.forget(`${principal.companyId}:${handoff.view.handoff_id}`);
  return handoff;
}

/**
 * Finalizes a record after a last merge. Finalizing a final record again without metadata (or with an
 * empty object, which merges nothing) is an idempotent success that changes nothing, so a retried
 * finalize is safe; with metadata to merge it is a conflict, raised by the database.
 */
export async function finalizeHandoffRecord(
  db: Db,
  principal: Principal,
  id: string,
  metadata: MetadataPatch | undefined,
  cache?: RecordForgetter,
): Promise<Handoff> {
  const patch = metadata && Object.keys(metadata).length > 0 ? metadata : undefined;
  const row = await finalizeHandoff(db, principal.companyId, id, patch);
  if (row) {
    const handoff = toHandoff(row);
    cache?.forget(`${principal.companyId}:${handoff.view.handoff_id}`);
    return handoff;
  }
  if (patch === undefined) {
    // Nothing was updated: either no such record, or it was final already (and so can be returned as is).
    const existing = await findHandoff(db, principal.companyId, id);
    if (existing?.final) return toHandoff(existing);
  }
  throw notFound(id);
}

/** Records finalized per statement by the stale sweep, so one sweep never holds many row locks at once. */
const STALE_BATCH = 500;

/**
 * Finalizes every record of any company still partial `staleAfterSeconds` after its creation (decision
 * 18), leaving its metadata as it is; returns how many. Counted from `created_at`, not `updated_at`, so a
 * reader's wait is bounded even when a writer keeps writing and never finalizes.
 */
export async function finalizeStaleHandoffRecords(db: Db, staleAfterSeconds: number): Promise<number> {
  let total = 0;
  for (;;) {
    const count = (await finalizeStaleHandoffs(db, staleAfterSeconds, STALE_BATCH)).length;
    total += count;
    if (count < STALE_BATCH) return total;
  }
}
