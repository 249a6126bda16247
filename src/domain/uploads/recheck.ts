/**
 * The look again at a verified upload once its URL has expired, on a storage whose PUTs the service does
 * not see (S3). A presigned URL takes PUTs until it expires, and S3 cannot be told to refuse them: bytes PUT
 * after verification (a retry, a wrong file, a file past the size limit) would stay served as the recording
 * that was verified. When the ETag found is not the one verified, the upload is `uploaded` again and its new
 * bytes are verified, as the embedded storage does at once when it receives a PUT.
 */
import type { Db } from '../../adapters/db/database.ts';
import { findUploadWithConversation, markReuploaded } from '../../adapters/db/repositories/uploads.ts';
import type { JobQueue } from '../../adapters/queue/queue.ts';
import type { Storage } from '../../adapters/storage/storage.ts';
import { enqueueVerification, secondsUntilLatePutsEnd } from './uploads.ts';

/** The job that looks again at a verified upload; payload `{uploadId}`. */
export const RECHECK_UPLOAD_JOB = 'upload.recheck';

/**
 * Queues the look at an upload verified while its URL (expiring at `urlExpiresAt`) can still take a PUT,
 * `graceSeconds` (UPLOAD_EXPIRY_GRACE) after the URL expires: a PUT begun just before may still be arriving.
 */
export async function queueRecheck(
  db: Db,
  queue: JobQueue,
  companyId: string,
  uploadId: number,
  urlExpiresAt: Date,
  graceSeconds: number,
): Promise<void> {
  const delay = secondsUntilLatePutsEnd(urlExpiresAt, graceSeconds);
  if (delay <= 0) return;
  await queue.enqueue(db, {
    kind: RECHECK_UPLOAD_JOB,
    companyId,
    payload: { uploadId },
    dedupeKey: `${RECHECK_UPLOAD_JOB}:${companyId}:${uploadId}`,
    delaySeconds: delay,
  });
}

/**
 * Looks at a verified upload's object: when its ETag is not the one verified, marks the upload uploaded and
 * queues the verification of its bytes, in one transaction. True when it did.
 */
export async function recheckUpload(
  deps: { db: Db; storage: Storage; queue: JobQueue },
  companyId: string,
  uploadId: number,
): Promise<boolean> {
  const upload = await findUploadWithConversation(deps.db, companyId, uploadId);
  if (!upload?.objectEtag || (upload.status !== 'ready' && upload.status !== 'rejected')) return false;
  const object = await deps.storage.head(upload.objectKey);
  // Gone (a rejected upload's object too large to keep was deleted): nothing new to verify.
  if (!object?.etag || object.etag === upload.objectEtag) return false;
  const marked = await deps.db.transaction(async (tx) => {
    if (!(await markReuploaded(tx, companyId, uploadId, upload.updatedAt, object.size))) return false;
    await enqueueVerification(tx, deps.queue, companyId, uploadId);
    return true;
  });
  if (marked) deps.queue.notify();
  return marked;
}
