/** call/create (spec 4.1, decisions 1, 2, 6, 9–11): one statement that records the call, its tags and upload. */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../adapters/db/database.ts';
import { writeCreatedCall } from '../../adapters/db/repositories/call-writes.ts';
import type { ConversationFields } from '../../adapters/db/repositories/conversations.ts';
import type { JobQueue } from '../../adapters/queue/queue.ts';
import type { Storage } from '../../adapters/storage/storage.ts';
import type { Principal } from '../access/principal.ts';
import { ANALYZE_CALL_JOB, transcriptAnalysisRun } from '../analysis/analysis.ts';
import { ValidationError } from '../errors.ts';
import { TRANSCRIBE_CALL_JOB } from '../transcription/transcription.ts';
import { planMedia } from '../uploads/media.ts';
import { signNewUpload, type UploadUrlResponse } from '../uploads/uploads.ts';
import { callCheckError } from './checks.ts';
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
  // Everything that needs no database is checked first.
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

  // The URL is signed first: it needs only the new object key, not the row.
  const upload = media
    ? await signNewUpload(deps.storage, deps.uploadUrlExpiresIn, { companyId, ...media })
    : undefined;
  // One statement does what the transaction did: agent, product, conversation, tags, the transcript's
  // analysis, the upload row and the event commit together or not at all (decision 9).
  const written = await writeCreatedCall(deps.db, companyId, {
    viewer: principal,
    agentEmail: input.agent_email,
    productId: input.product_id,
    conversationId,
    fields,
    replace,
    tags,
    analysis: transcript ? transcriptAnalysisRun(transcript) : undefined,
    upload: upload?.row,
  });
  if (written.outcome !== 'ok') {
    throw callCheckError(written, {
      agentEmail: input.agent_email,
      conversationId,
      productId: input.product_id,
    });
  }
  if (written.analysisQueued) deps.queue.notify([ANALYZE_CALL_JOB]);
  // A changed speaker re-runs the recording's analysis and transcription (migration 0033's trigger); the
  // statement does not say whether it changed, and a wake-up costs a worker only one claim.
  else if (speaker && !written.inserted) deps.queue.notify([ANALYZE_CALL_JOB, TRANSCRIBE_CALL_JOB]);
  if (upload && written.uploadId !== undefined) return upload.response(written.uploadId, conversationId);
  return { success: true as const, conversation_id: conversationId };
}
