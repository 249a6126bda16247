/**
 * A call's recording (decision 25): a signed GET URL of its latest `ready` upload, from whichever storage
 * holds it (the embedded storage's own URL, or an S3 presigned GET). Visibility is the read side's
 * (decision 22): a call the key may not see is not found, and so is a call with no ready upload.
 */
import type { Db } from '../../adapters/db/database.ts';
import { latestReadyUpload } from '../../adapters/db/repositories/uploads.ts';
import type { Storage } from '../../adapters/storage/storage.ts';
import type { Principal } from '../access/principal.ts';
import { NotFoundError } from '../errors.ts';
import { findVisibleCall } from './visibility.ts';

/** Where the recording can be read, for how long, and what it is. */
export interface RecordingLink {
  url: string;
  expires_in: number;
  content_type: string;
  size: number;
}

/** Signs a read of the call's latest ready recording, valid `expiresIn` seconds. */
export async function recordingLink(
  deps: { db: Db; storage: Storage },
  principal: Principal,
  callId: string,
  expiresIn: number,
): Promise<RecordingLink> {
  const call = await findVisibleCall(deps.db, principal, callId);
  const upload = await latestReadyUpload(deps.db, principal.companyId, call.id);
  if (!upload) throw new NotFoundError(`call ${callId} has no ready recording`);
  const signed = await deps.storage.presignGet(upload.objectKey, upload.contentType, expiresIn);
  return {
    url: signed.url,
    expires_in: signed.expiresIn,
    content_type: upload.contentType,
    size: upload.size,
  };
}
