/**
 * Erasure of a call's rows (decision 26), in the caller's transaction: the call's handoff records (final
 * ones too: the `call_handoffs_no_delete_final` trigger lets them through only while the transaction-local
 * `cqs.erasing` is on, see migration 0004), uploads, tags (cascade) and the call itself. Tables other
 * capabilities add under a call use ON DELETE CASCADE from `conversations`, so they go with it.
 */
import { and, asc, eq, lt, sql } from 'drizzle-orm';
import type { Db } from '../database.ts';
import { callHandoffs, companies, conversations, uploads } from '../schema.ts';

/** What an erasure leaves to do once its transaction commits: the stored objects to delete. */
export interface ErasedCall {
  objectKeys: string[];
  /** The ids of the handoff records deleted with the call. */
  handoffIds: string[];
  /** When the last signed upload URL of the call expires: an object may still arrive until then. */
  lastUploadUrlExpiry: Date | null;
}

/**
 * Locks the call and deletes its rows; undefined when there is no such call (erased meanwhile).
 *
 * The call's uploads are locked before the call: a change of an upload's status (its verification, an
 * embedded PUT, the sweeps) locks the upload and then the call (the `uploads_track_latest` trigger, an
 * analysis row's foreign key), so the call first and its uploads after was the opposite order, and the
 * two deadlocked (PostgreSQL aborted one: a DELETE answered 500).
 */
export async function deleteCallRows(tx: Db, companyId: string, id: string): Promise<ErasedCall | undefined> {
  await tx
    .select({ id: uploads.id })
    .from(uploads)
    .where(and(eq(uploads.companyId, companyId), eq(uploads.conversationUuid, id)))
    .orderBy(asc(uploads.id))
    .for('update');
  const [locked] = await tx
    .select({ id: conversations.id })
    .from(conversations)
    .where(and(eq(conversations.companyId, companyId), eq(conversations.id, id)))
    .for('update');
  if (!locked) return undefined;
  const files = await tx
    .select({ objectKey: uploads.objectKey, expiresAt: uploads.expiresAt })
    .from(uploads)
    .where(and(eq(uploads.companyId, companyId), eq(uploads.conversationUuid, id)));
  await tx.execute(sql`select set_config('cqs.erasing', 'on', true)`);
  const handoffs = await tx
    .delete(callHandoffs)
    .where(and(eq(callHandoffs.companyId, companyId), eq(callHandoffs.conversationUuid, id)))
    .returning({ id: callHandoffs.id });
  await tx.execute(sql`select set_config('cqs.erasing', 'off', true)`);
  await tx.delete(uploads).where(and(eq(uploads.companyId, companyId), eq(uploads.conversationUuid, id)));
  await tx.delete(conversations).where(and(eq(conversations.companyId, companyId), eq(conversations.id, id)));
  // Whatever the upload's status: a URL still valid takes another PUT after its upload was ready (S3).
  const expiries = files.map((f) => f.expiresAt.getTime());
  return {
    objectKeys: files.map((f) => f.objectKey),
    handoffIds: handoffs.map((r) => r.id),
    lastUploadUrlExpiry: expiries.length > 0 ? new Date(Math.max(...expiries)) : null,
  };
}

/** Companies with a retention period (service-wide: the retention sweep's). */
export async function companiesWithRetention(db: Db): Promise<{ id: string; retentionDays: number }[]> {
  const rows = await db
    .select({ id: companies.id, retentionDays: companies.retentionDays })
    .from(companies)
    .where(sql`${companies.retentionDays} is not null`)
    .orderBy(asc(companies.id));
  return rows as { id: string; retentionDays: number }[];
}

/** Up to `limit` ids of the company's calls whose start_time is before `before` (epoch seconds). */
export async function callsStartedBefore(db: Db, companyId: string, before: number, limit: number) {
  const rows = await db
    .select({ id: conversations.id })
    .from(conversations)
    .where(and(eq(conversations.companyId, companyId), lt(conversations.startTime, before)))
    .orderBy(asc(conversations.startTime))
    .limit(limit);
  return rows.map((r) => r.id);
}
