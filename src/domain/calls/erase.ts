/**
 * Erasing a call (decision 26). Crash safety: the call's rows are deleted and a job that deletes its
 * stored objects is queued in ONE transaction, so after any crash either the call is whole (the
 * transaction never committed) or it is unreadable and its objects' deletion is queued (the queue retries
 * it until done). Objects are deleted only after the rows are gone, so a readable call never lacks its
 * recording, and no object outlives its call for longer than the job takes. The request deletes the
 * objects itself right after the commit, so they are normally gone when it answers 204; the job then
 * finds nothing left (deleting a missing object is not an error).
 */

import type { Db } from '../../adapters/db/database.ts';
import { deleteCallRows } from '../../adapters/db/repositories/erasure.ts';
import type { JobQueue } from '../../adapters/queue/queue.ts';
import type { Storage } from '../../adapters/storage/storage.ts';
import type { Principal } from '../access/principal.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import { callRefs, recordEvent } from '../events/record.ts';
import type { FinalRecordCache } from '../handoffs/final-cache.ts';
import { secondsUntilLatePutsEnd } from '../uploads/uploads.ts';
import { findVisibleCall } from './visibility.ts';

/** The job that deletes an erased call's objects; payload `{objectKeys: string[]}`. */
export const ERASE_OBJECTS_JOB = 'call.erase-objects';

/** What erasure needs. */
export interface ErasureDeps {
  db: Db;
  queue: JobQueue;
  storage: Storage;
  /**
   * Seconds after a signed upload URL expires during which a PUT begun before it may still arrive
   * (UPLOAD_EXPIRY_GRACE): the objects are deleted again that long after the call's last URL expires.
   */
  lateUploadGraceSeconds: number;
  /**
   * This process's cache of final handoff records: erased ones are forgotten at once here (other
   * processes forget them when they hear the deletion's notification).
   */
  handoffCache?: Pick<FinalRecordCache, 'forget'>;
}

/**
 * Attempts of a `call.erase-objects` job: at the queue's backoff (doubling to 5 minutes, then every 5
 * minutes) they cover about a week of storage out of reach. The rows are gone by then, so the job's payload
 * is the only record of the objects: 20 attempts (about an hour) left them stored for good after a longer
 * outage.
 */
export const ERASE_OBJECTS_MAX_ATTEMPTS = 2100;

/**
 * Deletes the objects; each missing one is fine. Tries every one, then throws the first error, so one
 * object that cannot be deleted does not keep the others stored.
 */
export async function deleteObjects(storage: Storage, objectKeys: readonly string[]): Promise<void> {
  let failure: unknown;
  for (const key of objectKeys) {
    try {
      await storage.delete(key);
    } catch (error) {
      failure ??= error;
    }
  }
  if (failure !== undefined) throw failure;
}

/**
 * Erases the call's rows and queues the deletion of its objects, in one transaction; false when there was
 * no such call. Used by DELETE and by the retention sweep.
 */
export async function eraseCallById(
  deps: ErasureDeps,
  companyId: string,
  callId: string,
): Promise<{ objectKeys: string[] } | undefined> {
  const erased = await deps.db.transaction(async (tx) => {
    // The ids the event carries are read before the rows that hold them are gone.
    const ref = (await callRefs(tx, companyId, [callId])).get(callId);
    const rows = await deleteCallRows(tx, companyId, callId);
    if (!rows || !ref) return undefined;
    if (rows.objectKeys.length > 0) {
      const queueDeletion = (delaySeconds?: number) =>
        deps.queue.enqueue(tx, {
          kind: ERASE_OBJECTS_JOB,
          companyId,
          payload: { objectKeys: rows.objectKeys },
          maxAttempts: ERASE_OBJECTS_MAX_ATTEMPTS,
          ...(delaySeconds ? { delaySeconds } : {}),
        });
      await queueDeletion();
      // A signed upload URL still valid could bring an object after the erasure (S3 cannot be told to
      // refuse it): a second pass deletes the keys again once no late PUT to the call's URLs can land.
      const delay = rows.lastUploadUrlExpiry
        ? secondsUntilLatePutsEnd(rows.lastUploadUrlExpiry, deps.lateUploadGraceSeconds)
        : 0;
      if (delay > 0) await queueDeletion(delay);
    }
    await recordEvent(tx, companyId, 'call.deleted', { ...ref });
    return rows;
  });
  if (!erased) return undefined;
  deps.queue.notify();
  for (const handoffId of erased.handoffIds) deps.handoffCache?.forget(`${companyId}:${handoffId}`);
  return { objectKeys: erased.objectKeys };
}

/**
 * DELETE /api/v1/calls/{id}: only a key whose user is an admin (403), only a call it sees (404). The
 * objects are deleted before the answer when storage allows; otherwise the queued job does it.
 */
export async function eraseCall(deps: ErasureDeps, principal: Principal, id: string): Promise<void> {
  if (principal.role !== 'admin') {
    throw new ForbiddenError("erasing calls is for admins; the API key's user is not one");
  }
  const call = await findVisibleCall(deps.db, principal, id);
  const erased = await eraseCallById(deps, principal.companyId, call.id);
  if (!erased) throw new NotFoundError(`call ${id} not found`);
  try {
    await deleteObjects(deps.storage, erased.objectKeys);
  } catch {
    // The queued job retries; the call is already unreadable.
  }
}
