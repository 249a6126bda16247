/**
 * Reading calls back (decisions 23 and 24): the list, filtered and paged by keyset, and one call with its
 * transcript, uploads and linked records. Both show only what the principal may see (decision 22).
 */
import type { Db } from '../../adapters/db/database.ts';
import {
  type CallRow,
  type CallUploadRow,
  findCallDetail,
  listCalls,
  tagsOfCalls,
  type UploadStatus,
} from '../../adapters/db/repositories/call-reads.ts';
import type { TagValue } from '../../adapters/db/repositories/tags.ts';
import { findUserIdsByEmail } from '../../adapters/db/repositories/users.ts';
import type { Principal } from '../access/principal.ts';
import { analysisText, type CallAnalysisView } from '../analysis/analysis.ts';
import { type JsonText, jsonText } from '../json-text.ts';
import { type CallTranscriptionView, transcriptionView } from '../transcription/transcription.ts';
import { decodeCursor, encodeCursor, parseTagFilters } from './list-query.ts';
import { findVisible, visibleAgentOf } from './visibility.ts';

/** Default and largest page size. */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

/** A call as the list shows it (decision 23). */
export interface CallItem {
  id: string;
  conversation_id: string;
  agent: { id: string; email: string };
  product_id: number | null;
  start_time: number;
  state: 'created' | 'live' | 'stopped';
  tags: { key: string; value: string | number | boolean; type: TagValue['type'] }[];
  media: { upload_id: number; status: UploadStatus; filename: string; content_type: string } | null;
  has_transcript: boolean;
  created_at: string;
  updated_at: string;
}

/** An upload of a call as GET one shows it (decision 24). */
export interface CallUploadView {
  upload_id: number;
  status: UploadStatus;
  reason: string | null;
  filename: string;
  content_type: string;
  size: number | null;
  duration_s: number | null;
  channels: number | null;
  created_at: string;
}

/** A transcript segment as call/create or the transcription stored it (`unknown`: a mono recording's speaker). */
export interface TranscriptSegment {
  role: 'agent' | 'customer' | 'unknown';
  text: string;
  start: number;
  stop: number;
  confidence?: number;
}

/** One call (decision 24). */
export interface CallDetail extends CallItem {
  speaker: { separation: 'diarize' | 'channels'; channel_map: ('agent' | 'customer')[] | null };
  /** The stored JSON text of the segments, written into the answer as it is. */
  transcript: JsonText<TranscriptSegment[]> | null;
  transcript_source: 'client' | 'transcription' | null;
  /** The stored JSON text of the merged metadata (`{}` when none), written into the answer as it is. */
  metadata: JsonText<Record<string, unknown>>;
  uploads: CallUploadView[];
  handoff_ids: string[];
  /** Its figures' stored JSON text written as it is. */
  analysis: JsonText<CallAnalysisView> | null;
  /** The call's transcription by the configured engine, or null when none was queued. */
  transcription: CallTranscriptionView | null;
}

/** The list's parameters, their shapes checked by the route's schema. */
export interface ListQuery {
  limit?: number;
  cursor?: string;
  agent_email?: string;
  product_id?: number;
  conversation_id?: string;
  state?: 'created' | 'live' | 'stopped';
  start_time_gte?: number;
  start_time_lt?: number;
  media?: 'none' | 'pending' | 'uploaded' | 'ready' | 'rejected' | 'expired';
  tag?: string[];
}

/** A page of the list. */
export interface CallPage {
  calls: CallItem[];
  next_cursor: string | null;
}

function itemOf(row: CallRow, tags: TagValue[]): CallItem {
  return {
    id: row.id,
    conversation_id: row.conversationId,
    agent: { id: row.agentUserId, email: row.agentEmail },
    product_id: row.productId,
    start_time: row.startTime,
    state: row.state,
    tags: tags.map((t) => ({ key: t.key, value: t.value, type: t.type })),
    media: row.latest
      ? {
          upload_id: row.latest.id,
          status: row.latest.status,
          filename: row.latest.filename,
          content_type: row.latest.contentType,
        }
      : null,
    has_transcript: row.hasTranscript,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** A page of the calls the principal sees, newest start_time first. */
export async function listVisibleCalls(db: Db, principal: Principal, query: ListQuery): Promise<CallPage> {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const tags = parseTagFilters(query.tag ?? []);
  const agentUserId = visibleAgentOf(principal);
  const agentUserIds =
    query.agent_email === undefined
      ? undefined
      : await findUserIdsByEmail(db, principal.companyId, query.agent_email);
  if (agentUserIds?.length === 0) return { calls: [], next_cursor: null };
  // One row more than the page tells whether another page follows, without a count.
  const rows = await listCalls(
    db,
    principal.companyId,
    {
      ...(agentUserId !== undefined ? { agentUserId } : {}),
      ...(agentUserIds !== undefined ? { agentUserIds } : {}),
      ...(query.product_id !== undefined ? { productId: query.product_id } : {}),
      ...(query.conversation_id !== undefined ? { conversationId: query.conversation_id } : {}),
      ...(query.state !== undefined ? { state: query.state } : {}),
      ...(query.start_time_gte !== undefined ? { startTimeGte: query.start_time_gte } : {}),
      ...(query.start_time_lt !== undefined ? { startTimeLt: query.start_time_lt } : {}),
      ...(query.media !== undefined ? { media: query.media } : {}),
      ...(tags.length > 0 ? { tags } : {}),
    },
    after,
    limit + 1,
  );
  const page = rows.slice(0, limit);
  const tagsById = await tagsOfCalls(
    db,
    principal.companyId,
    page.map((r) => r.id),
  );
  const last = page[page.length - 1];
  return {
    calls: page.map((r) => itemOf(r, tagsById.get(r.id) ?? [])),
    next_cursor:
      rows.length > limit && last ? encodeCursor({ startTime: last.startTime, id: last.id }) : null,
  };
}

function uploadView(u: CallUploadRow): CallUploadView {
  // Verification stores its findings (verification.ts findingsOf); absent until the upload is verified.
  const probe = (u.probe ?? {}) as { duration_seconds?: number | null; audio_channels?: number | null };
  return {
    upload_id: u.id,
    status: u.status,
    reason: u.reason,
    filename: u.filename,
    content_type: u.contentType,
    size: u.size,
    duration_s: probe.duration_seconds ?? null,
    channels: probe.audio_channels ?? null,
    created_at: u.createdAt,
  };
}

/** One call the principal sees, with everything stored about it; NotFoundError otherwise (`findVisible`). */
export async function getVisibleCall(db: Db, principal: Principal, id: string): Promise<CallDetail> {
  const row = await findVisible(principal, id, (callUuid, agentUserId) =>
    findCallDetail(db, principal.companyId, callUuid, agentUserId),
  );
  return {
    ...itemOf(row, row.tags),
    speaker: {
      separation: row.speakerSeparation,
      channel_map: row.channelMap as ('agent' | 'customer')[] | null,
    },
    transcript: row.transcriptParts === null ? null : jsonText(row.transcriptParts),
    // A transcript stored before sources were recorded was a client's.
    transcript_source: row.transcriptParts === null ? null : (row.transcriptSource ?? 'client'),
    metadata: jsonText([row.metadataText]),
    uploads: row.uploads.map(uploadView),
    handoff_ids: row.handoffIds,
    analysis: analysisText(row.analysis),
    transcription: transcriptionView(row.transcription),
  };
}
