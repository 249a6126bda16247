/**
 * Uploads. Every query is filtered by company, except the sweep's listings, which are service-wide work
 * like the queue's claim.
 */
import { and, asc, desc, eq, gt, inArray, lt, ne, sql } from 'drizzle-orm';
import type { Db } from '../database.ts';
import { conversations, jobs, uploads } from '../schema.ts';

/** An upload row. */
export type Upload = typeof uploads.$inferSelect;

/** An upload with what its conversation adds: the client's id and the speaker separation. */
export interface UploadWithConversation extends Upload {
  conversationId: string;
  speakerSeparation: 'diarize' | 'channels';
}

/** A pending upload, as the sweep sees it. */
export interface PendingUpload {
  companyId: string;
  id: number;
  objectKey: string;
  expiresAt: Date;
}

/** The outcome of verification. */
export interface UploadVerdict {
  status: 'ready' | 'rejected';
  reason: string | null;
  size: number | null;
  probe: unknown;
  /** The ETag of the bytes judged (null where the storage gives none). */
  objectEtag: string | null;
}

/**
 * The change time of a row. Cut to milliseconds so that it survives the round trip through a JavaScript
 * Date exactly: verification compares it to know that nobody uploaded again meanwhile.
 */
const changedNow = sql`date_trunc('milliseconds', clock_timestamp())`;

/** Inserts a pending upload. */
export async function insertUpload(
  db: Db,
  values: {
    companyId: string;
    conversationUuid: string;
    filename: string;
    contentType: string;
    mediaKind: 'audio' | 'video';
    objectKey: string;
    expiresAt: Date;
  },
): Promise<Upload> {
  const [row] = await db.insert(uploads).values(values).returning();
  return row as Upload;
}

/** The upload with its conversation, or undefined. */
export async function findUploadWithConversation(
  db: Db,
  companyId: string,
  id: number,
): Promise<UploadWithConversation | undefined> {
  const [row] = await db
    .select({
      upload: uploads,
      conversationId: conversations.conversationId,
      speakerSeparation: conversations.speakerSeparation,
    })
    .from(uploads)
    .innerJoin(
      conversations,
      and(eq(conversations.companyId, uploads.companyId), eq(conversations.id, uploads.conversationUuid)),
    )
    .where(and(eq(uploads.companyId, companyId), eq(uploads.id, id)));
  if (!row) return undefined;
  return { ...row.upload, conversationId: row.conversationId, speakerSeparation: row.speakerSeparation };
}

/**
 * Marks the upload of an object as uploaded, whatever its status but expired: a signed URL may be used
 * again while it is valid (as on S3), and the newest bytes are the ones to verify. An expired upload has
 * told its readers so (`upload.expired`), so bytes that arrive after (a PUT begun before the URL expired,
 * still sending past the sweep's grace) are not its. Undefined when there is no such upload.
 */
export async function markUploadedByKey(
  db: Db,
  companyId: string,
  objectKey: string,
  size: number,
): Promise<Upload | undefined> {
  const [row] = await db
    .update(uploads)
    .set({ status: 'uploaded', reason: null, probe: null, size, updatedAt: changedNow })
    .where(
      and(eq(uploads.companyId, companyId), eq(uploads.objectKey, objectKey), ne(uploads.status, 'expired')),
    )
    .returning();
  return row;
}

/** Marks a pending upload as uploaded (the sweep found its object); false when it is not pending. */
export async function markUploadedIfPending(
  db: Db,
  companyId: string,
  id: number,
  size: number,
): Promise<boolean> {
  const rows = await db
    .update(uploads)
    .set({ status: 'uploaded', size, updatedAt: changedNow })
    .where(and(eq(uploads.companyId, companyId), eq(uploads.id, id), eq(uploads.status, 'pending')))
    .returning({ id: uploads.id });
  return rows.length > 0;
}

/** Marks a pending upload as expired; its conversation's uuid, or undefined when it is not pending. */
export async function markExpiredIfPending(
  db: Db,
  companyId: string,
  id: number,
  reason: string,
): Promise<string | undefined> {
  const [row] = await db
    .update(uploads)
    .set({ status: 'expired', reason, updatedAt: changedNow })
    .where(and(eq(uploads.companyId, companyId), eq(uploads.id, id), eq(uploads.status, 'pending')))
    .returning({ conversationUuid: uploads.conversationUuid });
  return row?.conversationUuid;
}

/**
 * Records verification's verdict, only if the upload is still the one that was verified (uploaded, and
 * not changed since `seenUpdatedAt`). False when it changed meanwhile.
 */
export async function recordVerdict(
  db: Db,
  companyId: string,
  id: number,
  seenUpdatedAt: Date,
  verdict: UploadVerdict,
): Promise<boolean> {
  const rows = await db
    .update(uploads)
    .set({ ...verdict, updatedAt: changedNow })
    .where(
      and(
        eq(uploads.companyId, companyId),
        eq(uploads.id, id),
        eq(uploads.status, 'uploaded'),
        eq(uploads.updatedAt, seenUpdatedAt),
      ),
    )
    .returning({ id: uploads.id });
  return rows.length > 0;
}

/**
 * Marks a verified upload (`ready` or `rejected`) as uploaded again, with the size of the bytes found in its
 * place; false when it changed since `seenUpdatedAt` (verified again, erased) and nothing was marked.
 */
export async function markReuploaded(
  db: Db,
  companyId: string,
  id: number,
  seenUpdatedAt: Date,
  size: number,
): Promise<boolean> {
  const rows = await db
    .update(uploads)
    .set({ status: 'uploaded', reason: null, probe: null, objectEtag: null, size, updatedAt: changedNow })
    .where(
      and(
        eq(uploads.companyId, companyId),
        eq(uploads.id, id),
        inArray(uploads.status, ['ready', 'rejected']),
        eq(uploads.updatedAt, seenUpdatedAt),
      ),
    )
    .returning({ id: uploads.id });
  return rows.length > 0;
}

/** Pending uploads of every company after `afterId`, oldest first (service-wide: the sweep's). */
export async function listPendingUploads(db: Db, afterId: number, limit: number): Promise<PendingUpload[]> {
  return db
    .select({
      companyId: uploads.companyId,
      id: uploads.id,
      objectKey: uploads.objectKey,
      expiresAt: uploads.expiresAt,
    })
    .from(uploads)
    .where(and(eq(uploads.status, 'pending'), gt(uploads.id, afterId)))
    .orderBy(asc(uploads.id))
    .limit(limit);
}

/**
 * Uploaded uploads of every company whose verification is lost: no verify job for them was made in the
 * last `quietSeconds` (their last one died after its final attempt). Service-wide: the sweep's.
 */
export async function listUploadsAwaitingVerification(
  db: Db,
  jobKind: string,
  quietSeconds: number,
  limit: number,
): Promise<{ companyId: string; id: number }[]> {
  return db
    .select({ companyId: uploads.companyId, id: uploads.id })
    .from(uploads)
    .where(
      and(
        eq(uploads.status, 'uploaded'),
        lt(uploads.updatedAt, sql`now() - make_interval(secs => ${quietSeconds})`),
        sql`not exists (select 1 from ${jobs} where ${jobs.kind} = ${jobKind}
          and ${jobs.companyId} = ${uploads.companyId}
          and ${jobs.payload}->>'uploadId' = ${uploads.id}::text
          and ${jobs.createdAt} > now() - make_interval(secs => ${quietSeconds}))`,
      ),
    )
    .orderBy(asc(uploads.id))
    .limit(limit);
}

/** The stored object of an upload that can be read back. */
export interface ReadableObject {
  uploadId: number;
  objectKey: string;
  contentType: string;
  size: number;
}

/** The newest `ready` upload of a call (highest id), or undefined when it has none. */
export async function latestReadyUpload(
  db: Db,
  companyId: string,
  conversationUuid: string,
): Promise<ReadableObject | undefined> {
  const [row] = await db
    .select({
      uploadId: uploads.id,
      objectKey: uploads.objectKey,
      contentType: uploads.contentType,
      size: uploads.size,
    })
    .from(uploads)
    .where(
      and(
        eq(uploads.companyId, companyId),
        eq(uploads.conversationUuid, conversationUuid),
        eq(uploads.status, 'ready'),
      ),
    )
    .orderBy(desc(uploads.id))
    .limit(1);
  return row ? { ...row, size: row.size ?? 0 } : undefined;
}
