/** call/create (spec 4.1, decisions 1, 2, 6, 9–11): one transaction that records the call, its tags and upload. */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../adapters/db/database.ts';
import { type ConversationFields, upsertConversation } from '../../adapters/db/repositories/conversations.ts';
import { upsertTags } from '../../adapters/db/repositories/tags.ts';
import type { JobQueue } from '../../adapters/queue/queue.ts';
import type { Storage } from '../../adapters/storage/storage.ts';
import type { Principal } from '../access/principal.ts';
import { requireUsableProduct } from '../access/products.ts';
import { queueTranscriptAnalysis } from '../analysis/analysis.ts';
import { ValidationError } from '../errors.ts';
import { recordEvent } from '../events/record.ts';
import { planMedia } from '../uploads/media.ts';
import { issueUpload, type UploadUrlResponse } from '../uploads/uploads.ts';
import { resolveAgent } from './agents.ts';
import { planSpeaker, type Role, type SpeakerInput } from './speaker.ts';
import { checkTags, type TagInput } from './tags.ts';
import { checkTranscript, type SegmentInput } from './transcript.ts';

/** The body of call/create, as the schema let it through. */
export interface CreateCallInput {
  agent_email: string;
  product_id: number;
  conversation_id?: string;
  start_time?: number;
  filename?: string;
  content_type?: string;
  speaker?: SpeakerInput;
  channels?: Role[];
  transcript?: SegmentInput[];
  tags?: TagInput[];
}

/** The success body with the conversation id (decision 6). */
export interface CreatedCall {
  success: true;
  conversation_id: string;
}

/** What call/create needs beyond the database. */
export interface CallDeps {
  db: Db;
  storage: Storage;
  uploadUrlExpiresIn: number;
  /** Where the analysis of a transcript is queued. */
  queue: JobQueue;
}

/** Seconds since the epoch above which a start_time must be milliseconds sent by mistake (decision 1). */
export const MAX_START_TIME = 100_000_000_000;

function checkStartTime(startTime: number | undefined): void {
  if (startTime === undefined) return;
  if (startTime < 0)
    throw new ValidationError('must not be negative (seconds since the Unix epoch)', 'start_time');
  if (startTime > MAX_START_TIME) {
    throw new ValidationError(
      `${startTime} is above ${MAX_START_TIME}, so it looks like milliseconds; send seconds since the Unix epoch`,
      'start_time',
    );
  }
}

/** Records the call of the (agent, conversation_id) pair, or updates it when it exists (decision 9). */
export async function createCall(
  deps: CallDeps,
  principal: Principal,
  input: CreateCallInput,
): Promise<CreatedCall | UploadUrlResponse> {
  // Everything that needs no database is checked first, so the transaction stays short.
  checkStartTime(input.start_time);
  const media = planMedia(input.filename, input.content_type);
  const speaker = planSpeaker(input.speaker, input.channels);
  const transcript = input.transcript ? checkTranscript(input.transcript) : undefined;
  const tags = input.tags ? checkTags(input.tags) : [];
  const conversationId = input.conversation_id ?? randomUUID();
  const { companyId } = principal;
  const fields: ConversationFields = {
    productId: input.product_id,
    startTime: input.start_time ?? Date.now() / 1000,
    speakerSeparation: speaker?.separation ?? 'diarize',
    channelMap: speaker?.channelMap ?? null,
    transcript: transcript ?? null,
    transcriptSource: transcript ? 'client' : null,
  };
  // On an existing pair only what the request sent changes; start_time does not fall back to now.
  const replace: (keyof ConversationFields)[] = ['productId'];
  if (input.start_time !== undefined) replace.push('startTime');
  if (speaker) replace.push('speakerSeparation', 'channelMap');
  if (transcript) replace.push('transcript', 'transcriptSource');

  let analysisQueued = false;
  const result = await deps.db.transaction(async (tx) => {
    const agent = await resolveAgent(tx, companyId, input.agent_email);
    await requireUsableProduct(tx, principal, input.product_id);
    const { id, state, inserted } = await upsertConversation(
      tx,
      companyId,
      { agentUserId: agent.id, conversationId },
      fields,
      replace,
    );
    await upsertTags(tx, companyId, id, tags);
    if (transcript) analysisQueued = await queueTranscriptAnalysis(tx, deps.queue, companyId, id, transcript);
    const upload = media
      ? await issueUpload(tx, deps.storage, deps.uploadUrlExpiresIn, {
          companyId,
          conversationUuid: id,
          conversationId,
          filename: media.filename,
          contentType: media.contentType,
          mediaKind: media.mediaKind,
        })
      : undefined;
    await recordEvent(tx, companyId, inserted ? 'call.created' : 'call.updated', {
      call_id: id,
      conversation_id: conversationId,
      agent_email: agent.email,
      state,
      ...(upload ? { upload_id: upload.upload_id } : {}),
    });
    return upload ?? { success: true as const, conversation_id: conversationId };
  });
  if (analysisQueued) deps.queue.notify();
  return result;
}
