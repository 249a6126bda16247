/**
 * The read side of calls: one call, and pages of the company's calls in the list's order
 * (start_time desc, id desc) by keyset, never OFFSET, so a page deep in the list costs what the first
 * one does. Every query is filtered by company; each filter is served by an index (see schema.ts).
 */
import { and, desc, eq, inArray, isNull, lt, type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn, SelectedFields } from 'drizzle-orm/pg-core';
import type { Db } from '../database.ts';
import { prepared, runPrepared } from '../prepared.ts';
import {
  callAnalyses,
  callTranscriptions,
  conversations,
  conversationTags,
  uploads,
  users,
} from '../schema.ts';
import type { CallAnalysis } from './analyses.ts';
import type { TagValue } from './tags.ts';
import type { CallTranscription } from './transcriptions.ts';

/** An upload status, as stored. */
export type UploadStatus = 'pending' | 'uploaded' | 'ready' | 'rejected' | 'expired';

/** A call with what the list shows beside its own columns: the agent's email and the latest upload. */
export interface CallRow {
  companyId: string;
  id: string;
  conversationId: string;
  agentUserId: string;
  agentEmail: string;
  productId: number | null;
  startTime: number;
  state: 'created' | 'live' | 'stopped';
  speakerSeparation: 'diarize' | 'channels';
  channelMap: string[] | null;
  hasTranscript: boolean;
  createdAt: string;
  updatedAt: string;
  latest: { id: number; status: UploadStatus; filename: string; contentType: string } | null;
}

/** Where a page starts: after the call with this key. */
export interface CallKey {
  startTime: number;
  id: string;
}

/** The filters of the list, combined with AND. */
export interface CallFilter {
  /** Only the calls of this agent user (an agent's own visibility). */
  agentUserId?: string;
  /** Only calls of one of these agent users (an agent_email resolved to its users first). */
  agentUserIds?: string[];
  productId?: number;
  conversationId?: string;
  state?: 'created' | 'live' | 'stopped';
  startTimeGte?: number;
  startTimeLt?: number;
  /** The status of the call's latest upload; `none`: the call has no upload. */
  media?: UploadStatus | 'none';
  /** The call has every one of these tags; with `value`, the tag's value written as text equals it. */
  tags?: { key: string; value?: string }[];
}

// Times as ISO 8601 in UTC with milliseconds, written by the database so no time zone is involved.
function iso(column: AnyPgColumn | SQL): SQL<string> {
  return sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

const ROW = {
  companyId: conversations.companyId,
  id: conversations.id,
  conversationId: conversations.conversationId,
  agentUserId: conversations.agentUserId,
  agentEmail: users.email,
  productId: conversations.productId,
  startTime: conversations.startTime,
  state: conversations.state,
  speakerSeparation: conversations.speakerSeparation,
  channelMap: conversations.channelMap,
  hasTranscript: sql<boolean>`(${conversations.transcript} is not null)`,
  createdAt: iso(conversations.createdAt),
  updatedAt: iso(conversations.updatedAt),
  latestId: uploads.id,
  latestStatus: uploads.status,
  latestFilename: uploads.filename,
  latestContentType: uploads.contentType,
};

type RawRow = {
  [K in keyof typeof ROW]: unknown;
};

function toCallRow(raw: RawRow): CallRow {
  const { latestId, latestStatus, latestFilename, latestContentType, ...rest } = raw;
  return {
    ...(rest as Omit<CallRow, 'latest'>),
    latest:
      latestId === null
        ? null
        : {
            id: latestId as number,
            status: latestStatus as UploadStatus,
            filename: latestFilename as string,
            contentType: latestContentType as string,
          },
  };
}

function selectCalls<Extra extends SelectedFields>(db: Db, extra?: Extra) {
  return db
    .select({ ...ROW, ...(extra as Extra) })
    .from(conversations)
    .innerJoin(
      users,
      and(eq(users.companyId, conversations.companyId), eq(users.id, conversations.agentUserId)),
    )
    .leftJoin(
      uploads,
      and(eq(uploads.companyId, conversations.companyId), eq(uploads.id, conversations.latestUploadId)),
    );
}

function filterConditions(companyId: string, filter: CallFilter): SQL[] {
  const c = conversations;
  const where: SQL[] = [eq(c.companyId, companyId)];
  if (filter.agentUserId !== undefined) where.push(eq(c.agentUserId, filter.agentUserId));
  // Ids, not a subquery on the email: with one id the planner can use the agent's index range.
  if (filter.agentUserIds !== undefined) where.push(inArray(c.agentUserId, filter.agentUserIds));
  if (filter.productId !== undefined) where.push(eq(c.productId, filter.productId));
  if (filter.conversationId !== undefined) where.push(eq(c.conversationId, filter.conversationId));
  if (filter.state !== undefined) where.push(eq(c.state, filter.state));
  if (filter.startTimeGte !== undefined) where.push(sql`${c.startTime} >= ${filter.startTimeGte}`);
  if (filter.startTimeLt !== undefined) where.push(lt(c.startTime, filter.startTimeLt));
  if (filter.media === 'none') where.push(isNull(c.latestUploadStatus));
  else if (filter.media !== undefined) where.push(eq(c.latestUploadStatus, filter.media));
  for (const tag of filter.tags ?? []) {
    const t = conversationTags;
    const value = tag.value === undefined ? sql`` : sql` and (${t.value} #>> '{}') = ${tag.value}`;
    where.push(
      sql`exists (select 1 from ${t} where ${t.companyId} = ${c.companyId}
        and ${t.conversationUuid} = ${c.id} and ${t.key} = ${tag.key}${value})`,
    );
  }
  return where;
}

/**
 * The query of a page, not yet run: up to `limit` calls of the company matching `filter`, in list order,
 * after `after` when given. Exposed so a test can EXPLAIN exactly what the list runs.
 */
export function listCallsQuery(
  db: Db,
  companyId: string,
  filter: CallFilter,
  after: CallKey | undefined,
  limit: number,
) {
  const where = filterConditions(companyId, filter);
  if (after) {
    // A row comparison: the index (…, start_time, id) is scanned backwards from the key.
    where.push(
      sql`(${conversations.startTime}, ${conversations.id}) < (${after.startTime}, ${after.id}::uuid)`,
    );
  }
  return selectCalls(db)
    .where(and(...where))
    .orderBy(desc(conversations.startTime), desc(conversations.id))
    .limit(limit);
}

/** Up to `limit` calls of the company matching `filter`, in list order, after `after` when given. */
export async function listCalls(
  db: Db,
  companyId: string,
  filter: CallFilter,
  after: CallKey | undefined,
  limit: number,
): Promise<CallRow[]> {
  const rows = await listCallsQuery(db, companyId, filter, after, limit);
  return rows.map(toCallRow);
}

/** The call, or undefined. */
export async function findCall(db: Db, companyId: string, id: string): Promise<CallRow | undefined> {
  const [row] = await selectCalls(db).where(
    and(eq(conversations.companyId, companyId), eq(conversations.id, id)),
  );
  return row ? toCallRow(row) : undefined;
}

/** The tags of each call, ordered by key, by call id (calls without tags are absent). */
export async function tagsOfCalls(
  db: Db,
  companyId: string,
  ids: string[],
): Promise<Map<string, TagValue[]>> {
  const out = new Map<string, TagValue[]>();
  if (ids.length === 0) return out;
  // The value as JSON text, parsed here once. Read as jsonb, both drivers decode it and Drizzle's jsonb
  // column parses a string it is given again: a string tag "123" came back as the number 123, and "null" or
  // "[1,2]" made the whole page a 500 (the answer no longer matched its schema).
  const rows = await db
    .select({
      id: conversationTags.conversationUuid,
      key: conversationTags.key,
      type: conversationTags.type,
      value: sql<string>`${conversationTags.value}::text`,
    })
    .from(conversationTags)
    .where(and(eq(conversationTags.companyId, companyId), inArray(conversationTags.conversationUuid, ids)))
    .orderBy(conversationTags.conversationUuid, conversationTags.key);
  for (const { id, key, type, value } of rows) {
    const list = out.get(id) ?? [];
    list.push({ key, type, value: JSON.parse(value) } as TagValue);
    out.set(id, list);
  }
  return out;
}

/** An upload of a call as GET one shows it. */
export interface CallUploadRow {
  id: number;
  status: UploadStatus;
  reason: string | null;
  filename: string;
  contentType: string;
  size: number | null;
  probe: unknown;
  createdAt: string;
}

/** Everything GET one shows of a call: its list row and what only the detail holds. */
export interface CallDetailRow extends CallRow {
  /**
   * The transcript's JSON text as stored (not parsed: it is written into the answer as it is), in the parts
   * it is stored in (transcript-text.ts); null when the call has none.
   */
  transcriptParts: string[] | null;
  transcriptSource: 'client' | 'transcription' | null;
  /** The merged metadata's JSON text (an object; `{}` when none), not parsed, as the transcript. */
  metadataText: string;
  /** Ordered by key. */
  tags: TagValue[];
  /** Newest first. */
  uploads: CallUploadRow[];
  /** The linked handoff records' ids, oldest first. */
  handoffIds: string[];
  /** The analysis, its figures as their stored JSON text (not parsed); null when none was ever queued. */
  analysis: (Pick<CallAnalysis, 'status' | 'reason' | 'source'> & { figuresText: string | null }) | null;
  transcription: Pick<CallTranscription, 'status' | 'reason' | 'engine' | 'uploadId' | 'updatedAt'> | null;
}

// The detail's lists, each one json value of its rows in the detail's order (one statement, one round trip).
const c = conversations;
const TAGS = sql<TagValue[]>`(select coalesce(json_agg(json_build_object('key', t.key, 'type', t.type,
  'value', t.value) order by t.key), '[]'::json) from conversation_tags t
  where t.company_id = ${c.companyId} and t.conversation_uuid = ${c.id})`;
const UPLOAD_FIELDS = sql`'id', u.id, 'status', u.status, 'reason', u.reason, 'filename', u.filename,
  'contentType', u.content_type, 'size', u.size, 'probe', u.probe, 'createdAt', ${iso(sql`u.created_at`)}`;
const UPLOADS = sql<CallUploadRow[]>`(select coalesce(json_agg(json_build_object(${UPLOAD_FIELDS})
  order by u.id desc), '[]'::json) from uploads u
  where u.company_id = ${c.companyId} and u.conversation_uuid = ${c.id})`;
const HANDOFF_IDS = sql<string[]>`(select coalesce(json_agg(h.id order by h.created_at, h.id), '[]'::json)
  from call_handoffs h where h.company_id = ${c.companyId} and h.conversation_uuid = ${c.id})`;

// The transcript and its source, a row per stored line (transcript-text.ts); no row: no such call.
const TRANSCRIPT_PARTS = prepared(
  'call_transcript_parts',
  `select c.transcript_source, p.part
   from conversations c
     left join lateral string_to_table(c.transcript::text, E'\\n') with ordinality as p(part, n) on true
   where c.company_id = $1 and c.id = $2 and ($3::uuid is null or c.agent_user_id = $3::uuid)
   order by p.n`,
);

const a = callAnalyses;
const tr = callTranscriptions;
// The call with its lists, as one statement prepared once per database: building it with Drizzle at every
// read allocated 165 kB of the V8 heap a read made (of 934 kB) and took its CPU. `agent` null: any agent.
function detailStatement(db: Db) {
  const agent = sql.placeholder('agent');
  return selectCalls(db, {
    metadataText: sql<string>`${c.metadata}::text`,
    tags: TAGS,
    uploads: UPLOADS,
    handoffIds: HANDOFF_IDS,
    analysis: {
      status: a.status,
      reason: a.reason,
      source: a.source,
      figuresText: sql<string | null>`${a.figures}::text`,
    },
    transcription: {
      status: tr.status,
      reason: tr.reason,
      engine: tr.engine,
      uploadId: tr.uploadId,
      updatedAt: tr.updatedAt,
    },
  })
    .leftJoin(a, and(eq(a.companyId, c.companyId), eq(a.conversationUuid, c.id)))
    .leftJoin(tr, and(eq(tr.companyId, c.companyId), eq(tr.conversationUuid, c.id)))
    .where(
      and(
        eq(c.companyId, sql.placeholder('companyId')),
        eq(c.id, sql.placeholder('id')),
        sql`(${agent}::uuid is null or ${c.agentUserId} = ${agent}::uuid)`,
      ),
    )
    .prepare('cqs_call_detail');
}
const detailStatements = new WeakMap<Db, ReturnType<typeof detailStatement>>();

/**
 * The call with everything GET one shows when it is the company's and (with `agentUserId`) that agent's;
 * undefined otherwise. Two statements at once, instead of seven (on these machines each round trip cost the
 * service 60-130 µs of CPU in its own socket writes alone): the call with its lists, and its transcript in
 * the parts it is stored in, with its source.
 */
export async function findCallDetail(
  db: Db,
  companyId: string,
  id: string,
  agentUserId: string | undefined,
): Promise<CallDetailRow | undefined> {
  let details = detailStatements.get(db);
  if (!details) {
    details = detailStatement(db);
    detailStatements.set(db, details);
  }
  const [[raw], parts] = await Promise.all([
    details.execute({ companyId, id, agent: agentUserId ?? null }),
    runPrepared(db, TRANSCRIPT_PARTS, [companyId, id, agentUserId ?? null]),
  ]);
  const [first] = parts;
  // Erased, or made another agent's, between the two reads.
  if (!raw || !first) return undefined;
  const { metadataText, tags, uploads, handoffIds, analysis, transcription, ...row } = raw;
  const transcriptParts = first.part === null ? null : parts.map((p) => p.part as string);
  return {
    // From the statement that read the transcript, so `has_transcript` and `transcript` always agree.
    ...toCallRow(row),
    hasTranscript: transcriptParts !== null,
    transcriptParts,
    transcriptSource: first.transcript_source as CallDetailRow['transcriptSource'],
    metadataText,
    tags,
    uploads,
    handoffIds,
    analysis,
    transcription,
  };
}
