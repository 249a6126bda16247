/**
 * The upload sweep. S3 does not tell the service that a client uploaded; a client may say so
 * (POST /api/v1/upload/{id}/complete, see `completeUpload`), and the sweep is the fallback for one that
 * does not: it looks for the object of every pending upload (HeadObject) and, when it
 * is there, marks the upload uploaded and queues its verification. A pending upload whose URL expired
 * (plus a grace period for an upload that started just before) with no object becomes `expired`. The
 * embedded storage reports uploads itself; there the sweep only repairs a crash between the file's rename
 * and its database update. Last, it queues again the verification of uploads whose verify job died.
 */
import type { Db } from '../../adapters/db/database.ts';
import {
  listPendingUploads,
  listUploadsAwaitingVerification,
  markExpiredIfPending,
  type PendingUpload,
} from '../../adapters/db/repositories/uploads.ts';
import type { JobQueue } from '../../adapters/queue/queue.ts';
import type { Storage } from '../../adapters/storage/storage.ts';
import { callRef, recordEvent } from '../events/record.ts';
import { enqueueVerification, recordObjectIfPresent, VERIFY_UPLOAD_JOB } from './uploads.ts';

/** The periodic job that runs the sweep; service-wide, at most one queued at a time. */
export const SWEEP_UPLOADS_JOB = 'upload.sweep';

/** What the sweep needs. */
export interface SweepDeps {
  db: Db;
  storage: Storage;
  queue: JobQueue;
}

/** What one sweep did. */
export interface SweepReport {
  checked: number;
  uploaded: number;
  expired: number;
  requeued: number;
}

/** Options of a sweep. */
export interface SweepOptions {
  /** Seconds after expiry before a pending upload with no object is declared expired. */
  expiryGraceSeconds: number;
  /** Seconds without a verify job before a lost verification is queued again. */
  verifyQuietSeconds?: number;
  /** The time to judge expiry by; the database's clock sets the row times, this only compares them. */
  now?: Date;
  batchSize?: number;
  concurrency?: number;
}

const EXPIRED_REASON = 'the upload URL expired with nothing uploaded';

async function inBatches<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>) {
  for (let i = 0; i < items.length; i += concurrency) {
    await Promise.all(items.slice(i, i + concurrency).map(work));
  }
}

/** Runs one sweep over every company's pending uploads. */
export async function sweepUploads(deps: SweepDeps, options: SweepOptions): Promise<SweepReport> {
  const report: SweepReport = { checked: 0, uploaded: 0, expired: 0, requeued: 0 };
  const now = options.now ?? new Date();
  const batchSize = options.batchSize ?? 200;

  const check = async (upload: PendingUpload) => {
    report.checked++;
    const outcome = await recordObjectIfPresent(deps, upload);
    if (outcome === 'marked') report.uploaded++;
    const lapsed = upload.expiresAt.getTime() + options.expiryGraceSeconds * 1000 < now.getTime();
    if (outcome === 'missing' && lapsed) {
      const expired = await deps.db.transaction(async (tx) => {
        const conversationUuid = await markExpiredIfPending(tx, upload.companyId, upload.id, EXPIRED_REASON);
        if (!conversationUuid) return false;
        const ref = await callRef(tx, upload.companyId, conversationUuid);
        await recordEvent(tx, upload.companyId, 'upload.expired', {
          ...ref,
          upload_id: upload.id,
          status: 'expired',
          reason: EXPIRED_REASON,
        });
        return true;
      });
      if (expired) report.expired++;
    }
  };

  let afterId = 0;
  for (;;) {
    const batch = await listPendingUploads(deps.db, afterId, batchSize);
    if (batch.length === 0) break;
    await inBatches(batch, options.concurrency ?? 8, check);
    afterId = batch[batch.length - 1]?.id ?? afterId;
  }

  const lost = await listUploadsAwaitingVerification(
    deps.db,
    VERIFY_UPLOAD_JOB,
    options.verifyQuietSeconds ?? 3600,
    batchSize,
  );
  for (const upload of lost) {
    if (await enqueueVerification(deps.db, deps.queue, upload.companyId, upload.id)) report.requeued++;
  }
  if (report.uploaded + report.requeued > 0) deps.queue.notify();
  return report;
}
