/** Issuing uploads: a pending upload row and a signed URL pinned to its Content-Type. */
import { randomUUID } from 'node:crypto';
import type { Db } from '../adapters/db/database.ts';
import { insertUpload } from '../adapters/db/repositories/uploads.ts';
import type { Storage } from '../adapters/storage/storage.ts';

/** The upload body of call/create (spec 2.5). */
export interface UploadUrlResponse {
  upload_id: number;
  conversation_id: string;
  upload_url: string;
  expires_in: number;
  upload_content_type: string;
}

/** Records a pending upload for a conversation and signs its URL. */
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
  // The object key never contains the client's file name, so no name can reach the file system.
  const objectKey = `${values.companyId}/${randomUUID()}`;
  const signed = await storage.presignPut(objectKey, values.contentType, expiresIn);
  const row = await insertUpload(db, {
    companyId: values.companyId,
    conversationUuid: values.conversationUuid,
    filename: values.filename,
    contentType: values.contentType,
    mediaKind: values.mediaKind,
    objectKey,
    expiresAt: new Date(Date.now() + expiresIn * 1000),
  });
  return {
    upload_id: row.id,
    conversation_id: values.conversationId,
    upload_url: signed.url,
    expires_in: signed.expiresIn,
    upload_content_type: signed.contentType,
  };
}
