/**
 * Uploads: issuing a pending upload with a signed URL pinned to its Content-Type, recording that its bytes
 * arrived (which queues verification), and showing an upload to its company.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../adapters/db/database.ts';
import type { NewUploadRow } from '../../adapters/db/repositories/call-writes.ts';
import {
  findUploadWithConversation,
  insertUpload,
  markUploadedByKey,
  markUploadedIfPending,
} from '../../adapters/db/repositories/uploads.ts';
import type { JobQueue } from '../../adapters/queue/queue.ts';
import type { Storage } from '../../adapters/storage/storage.ts';
import type { Principal } from '../access/principal.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { CANONICAL_UUID } from '../uuid.ts';

/** Decision 14: an upload of this many bytes or more is refused. */
export const MAX_UPLOAD_BYTES = 250_000_000;

/** The job that verifies an upload; its payload is `{uploadId}` and it carries the company. */
export const VERIFY_UPLOAD_JOB = 'upload.verify';

/** Verification jobs are retried for about a quarter of an hour before they are declared dead. */
const VERIFY_MAX_ATTEMPTS = 10;

/** The upload body of call/create (spec 2.5). */
export interface UploadUrlResponse {
  upload_id: number;
  conversation_id: string;
  upload_url: string;
  expires_in: number;
  upload_content_type: string;
}

/** What verification found in the bytes (stored in uploads.probe, shown as `media`). */
export interface MediaFindings {
  container: string | null;
  format: string | null;
  duration_seconds: number | null;
  has_audio: boolean;
  has_video: boolean;
  audio_streams: number;
  video_streams: number;
  audio_channels: number | null;
  audio_codec: string | null;
  audio_sample_rate: number | null;
  video_codec: string | null;
  video_width: number | null;
  video_height: number | null;
}

/**
 * Seconds from now until no PUT to a URL expiring at `urlExpiresAt` can still land: a PUT begun before the
 * URL expired may arrive up to `graceSeconds` (UPLOAD_EXPIRY_GRACE) later. 0 or less once that has passed.
 */
export function secondsUntilLatePutsEnd(urlExpiresAt: Date, graceSeconds: number): number {
  return Math.ceil((urlExpiresAt.getTime() - Date.now()) / 1000) + graceSeconds;
}

/** Below this, audio is not speech as any recorder makes it (telephone speech is 8 kHz). */
export const MIN_SPEECH_SAMPLE_RATE = 8000;

/**
 * A ready recording's findings and audio channels, as analysis and transcription read them, or why its audio
 * cannot be listened to. A sample rate far below speech's made a few kilobytes of WAV hours of audio (40 kB
 * at 1 Hz: 20,000 s), decoded at speech's rate: minutes of the worker per megabyte uploaded.
 */
export function listenableAudio(
  probe: MediaFindings | null,
): { probe: MediaFindings; channels: number } | { problem: string } {
  const channels = probe?.audio_channels ?? 0;
  if (!probe?.has_audio || channels < 1) return { problem: 'the recording has no audio stream' };
  const rate = probe.audio_sample_rate;
  if (rate !== null && rate < MIN_SPEECH_SAMPLE_RATE) {
    return {
      problem: `the audio's sample rate is ${rate} Hz; speech needs at least ${MIN_SPEECH_SAMPLE_RATE} Hz`,
    };
  }
  return { probe, channels };
}

/** An upload as GET /api/v1/upload/{upload_id} shows it. */
export interface UploadView {
  upload_id: number;
  conversation_id: string;
  status: 'pending' | 'uploaded' | 'ready' | 'rejected' | 'expired';
  reason: string | null;
  filename: string;
  content_type: string;
  size: number | null;
  media: MediaFindings | null;
  expires_at: string;
  created_at: string;
  updated_at: string;
}

/** The object key of a new upload. It never contains the client's file name, so no name reaches a path. */
export function newObjectKey(companyId: string): string {
  return `${companyId}/${randomUUID()}`;
}

/** The company an object key belongs to (its first segment), or undefined for a key we never made. */
export function companyOfObjectKey(objectKey: string): string | undefined {
  const [company, name, ...rest] = objectKey.split('/');
  if (!company || !name || rest.length > 0 || !CANONICAL_UUID.test(company)) return undefined;
  return company;
}

/** An upload signed before its row is written: the row to insert, and the answer once it has its id. */
export interface SignedUpload {
  row: NewUploadRow;
  response(uploadId: number, conversationId: string): UploadUrlResponse;
}

/**
 * Signs the URL of a new pending upload. The object key is new and the signature needs no row, so the URL
 * is signed before the row is written, in the statement of call/create.
 */
export async function signNewUpload(
  storage: Storage,
  expiresIn: number,
  values: { companyId: string; filename: string; contentType: string; mediaKind: 'audio' | 'video' },
): Promise<SignedUpload> {
  const objectKey = newObjectKey(values.companyId);
  const signed = await storage.presignPut(objectKey, values.contentType, expiresIn);
  return {
    row: {
      filename: values.filename,
      contentType: values.contentType,
      mediaKind: values.mediaKind,
      objectKey,
      expiresAt: new Date(Date.now() + expiresIn * 1000),
    },
    response: (uploadId, conversationId) => ({
      upload_id: uploadId,
      conversation_id: conversationId,
      upload_url: signed.url,
      expires_in: signed.expiresIn,
      upload_content_type: signed.contentType,
    }),
  };
}

/** Records a pending upload for an existing conversation and signs its URL. */
export async function issueUpload(
  db: Db,
  storage: Storage,
  expiresIn: number,
  values: {
    companyId: string;
    conversationUuid: string;
    conversationId: string;
    filename: string;
    contentType: string;
    mediaKind: 'audio' | 'video';
  },
): Promise<UploadUrlResponse> {
  const upload = await signNewUpload(storage, expiresIn, values);
  const { companyId, conversationUuid } = values;
  const row = await insertUpload(db, { companyId, conversationUuid, ...upload.row });
  return upload.response(row.id, values.conversationId);
}

/** Queues verification of an upload (in `db`, which may be a transaction); a queued one is not doubled. */
export function enqueueVerification(db: Db, queue: JobQueue, companyId: string, uploadId: number) {
  return queue.enqueue(db, {
    kind: VERIFY_UPLOAD_JOB,
    companyId,
    payload: { uploadId },
    dedupeKey: `${VERIFY_UPLOAD_JOB}:${companyId}:${uploadId}`,
    maxAttempts: VERIFY_MAX_ATTEMPTS,
  });
}

/**
 * Records that the bytes of an object arrived: the upload becomes `uploaded` and its verification is
 * queued in the same transaction, so neither happens without the other. False when no upload has the key.
 */
export async function recordUploadedObject(
  deps: { db: Db; queue: JobQueue },
  objectKey: string,
  size: number,
): Promise<boolean> {
  const companyId = companyOfObjectKey(objectKey);
  if (!companyId) return false;
  const found = await deps.db.transaction(async (tx) => {
    const upload = await markUploadedByKey(tx, companyId, objectKey, size);
    if (!upload) return false;
    await enqueueVerification(tx, deps.queue, companyId, upload.id);
    return true;
  });
  if (found) deps.queue.notify();
  return found;
}

/**
 * Records an object the storage has just received as its upload's bytes. When no upload waits for it, the
 * object is deleted; false then. Recording errors are rethrown and the object is kept: it may have replaced
 * the bytes of a ready recording (a PUT to a URL used before) or of a concurrent PUT that succeeded, and
 * deleting it lost them. A pending upload's object is found by the sweep (or the client's retry) instead.
 */
export async function acceptReceivedObject(
  deps: { db: Db; queue: JobQueue; storage: Storage },
  objectKey: string,
  size: number,
): Promise<boolean> {
  const recorded = await recordUploadedObject(deps, objectKey, size);
  if (!recorded) await deps.storage.delete(objectKey);
  return recorded;
}

/**
 * Looks for a pending upload's object (HEAD) and, when it is there, marks the upload uploaded and queues its
 * verification in one transaction. `marked` when this call did it; `missing` when there is no object yet;
 * `not-pending` when the upload had left `pending` meanwhile (another sweep or completion won).
 */
export async function recordObjectIfPresent(
  deps: { db: Db; queue: JobQueue; storage: Storage },
  upload: { companyId: string; id: number; objectKey: string },
): Promise<'marked' | 'missing' | 'not-pending'> {
  const object = await deps.storage.head(upload.objectKey);
  if (!object) return 'missing';
  const marked = await deps.db.transaction(async (tx) => {
    if (!(await markUploadedIfPending(tx, upload.companyId, upload.id, object.size))) return false;
    await enqueueVerification(tx, deps.queue, upload.companyId, upload.id);
    return true;
  });
  return marked ? 'marked' : 'not-pending';
}

/**
 * POST /api/v1/upload/{id}/complete: the client says it has PUT the bytes. A pending upload whose object is
 * there becomes `uploaded` and is verified at once (S3 tells the service nothing; without this call the
 * sweep finds the object within UPLOAD_SWEEP_INTERVAL seconds). The client is not trusted: the object is
 * looked up. An upload past `pending` is shown as it is, so the call may be repeated.
 */
export async function completeUpload(
  deps: { db: Db; queue: JobQueue; storage: Storage },
  principal: Principal,
  uploadId: number,
): Promise<UploadView> {
  const upload = await findUploadWithConversation(deps.db, principal.companyId, uploadId);
  if (!upload) throw new NotFoundError(`upload ${uploadId} not found`);
  if (upload.status === 'pending') {
    const outcome = await recordObjectIfPresent(deps, upload);
    if (outcome === 'marked') deps.queue.notify();
    if (outcome === 'missing') {
      throw new ConflictError(
        upload.expiresAt.getTime() < Date.now()
          ? `upload ${uploadId}: its upload_url expired with nothing uploaded; create the call again for a new URL`
          : `upload ${uploadId}: nothing has arrived at its upload_url yet; PUT the file there ` +
              `(Content-Type: ${upload.contentType}) and call this again once the PUT has answered 200`,
      );
    }
  }
  return getUpload(deps.db, principal, uploadId);
}

/** The upload as its company sees it; NotFoundError for another company's or a missing one. */
export async function getUpload(db: Db, principal: Principal, uploadId: number): Promise<UploadView> {
  const upload = await findUploadWithConversation(db, principal.companyId, uploadId);
  if (!upload) throw new NotFoundError(`upload ${uploadId} not found`);
  return {
    upload_id: upload.id,
    conversation_id: upload.conversationId,
    status: upload.status,
    reason: upload.reason,
    filename: upload.filename,
    content_type: upload.contentType,
    size: upload.size,
    media: (upload.probe as MediaFindings | null) ?? null,
    expires_at: upload.expiresAt.toISOString(),
    created_at: upload.createdAt.toISOString(),
    updated_at: upload.updatedAt.toISOString(),
  };
}
