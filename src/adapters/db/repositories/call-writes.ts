/**
 * The writes of call requests in one round trip each: database functions of migrations 0013 and 0014 that run what
 * their transactions ran statement by statement. They write nothing when a check fails and say which
 * check did; the domain turns that into its error. Every call is filtered by company.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../database.ts';
import { prepared, rowsOf, runPrepared } from '../prepared.ts';
import { transcriptJsonText } from '../transcript-text.ts';
import type { ConversationFields } from './conversations.ts';
import { inKeyOrder, type TagValue } from './tags.ts';

/** Who asks, for the product rule: an admin sees the company's products, an agent the granted ones. */
export interface CallViewer {
  userId: string;
  role: 'admin' | 'agent';
}

/** A check of a call write that failed (agent, product, the pair's call); nothing was written. */
export type CallCheckFailure =
  | { outcome: 'agent-missing' }
  | { outcome: 'agent-ambiguous'; agentIds: string[] }
  | { outcome: 'product-missing' }
  | { outcome: 'product-inactive'; productStatus: string }
  | { outcome: 'conversation-missing' }
  | { outcome: 'call-stopped' };

/** What call/create wrote. */
export interface CreatedCallRow {
  outcome: 'ok';
  agentEmail: string;
  id: string;
  state: 'created' | 'live' | 'stopped';
  inserted: boolean;
  uploadId: number | undefined;
  analysisQueued: boolean;
}

/** The upload row call/create issues. */
export interface NewUploadRow {
  filename: string;
  contentType: string;
  mediaKind: 'audio' | 'video';
  objectKey: string;
  expiresAt: Date;
}

/** Everything call/create writes, besides the company. */
export interface CreateCallWrite {
  viewer: CallViewer;
  agentEmail: string;
  productId: number;
  conversationId: string;
  fields: Omit<ConversationFields, 'productId'>;
  /** Fields of an existing pair that change (the product always does). */
  replace: readonly (keyof ConversationFields)[];
  tags: readonly TagValue[];
  /** The run and job kind of the transcript's analysis, queued unless the call has a ready recording. */
  analysis: { runId: string; jobKind: string } | undefined;
  upload: NewUploadRow | undefined;
}

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

function firstRow(rows: Record<string, unknown>[]): Record<string, unknown> {
  const [row] = rows;
  if (!row) throw new Error('call write returned no row');
  return row;
}

function rowOf(result: unknown): Record<string, unknown> {
  return firstRow(rowsOf(result));
}

function failureOf(row: Record<string, unknown>): CallCheckFailure | undefined {
  switch (row.outcome) {
    case 'agent-missing':
    case 'product-missing':
    case 'conversation-missing':
    case 'call-stopped':
      return { outcome: row.outcome };
    case 'agent-ambiguous': {
      const ids = typeof row.agent_ids === 'string' ? JSON.parse(row.agent_ids) : row.agent_ids;
      return { outcome: 'agent-ambiguous', agentIds: ids as string[] };
    }
    case 'product-inactive':
      return { outcome: 'product-inactive', productStatus: String(row.product_status) };
    default:
      return undefined;
  }
}

const CREATE_CALL = prepared(
  'create_call',
  `select outcome, to_jsonb(agent_ids) as agent_ids, product_status, agent_address, call_uuid, call_state,
     was_inserted, new_upload_id::text as new_upload_id, analysis_queued
   from cqs_create_call($1::uuid, $2::uuid, $3::boolean, $4::text, $5::bigint, $6::text,
     $7::double precision, $8::text, $9::text, $10::text, $11::boolean, $12::boolean, $13::boolean,
     $14::text, $15::uuid, $16::text, $17::text, $18::text, $19::text, $20::text, $21::timestamptz)`,
);

/**
 * call/create's one statement: the agent, the product, the conversation upsert (concurrent creates of one
 * new pair end as one row), the tags, the transcript's analysis, the upload row and the event.
 */
export async function writeCreatedCall(
  db: Db,
  companyId: string,
  write: CreateCallWrite,
): Promise<CreatedCallRow | CallCheckFailure> {
  const { fields, upload } = write;
  const sets = new Set(write.replace);
  const rows = await runPrepared(db, CREATE_CALL, [
    companyId,
    write.viewer.userId,
    write.viewer.role === 'admin',
    write.agentEmail,
    write.productId,
    write.conversationId,
    fields.startTime,
    fields.speakerSeparation,
    json(fields.channelMap),
    fields.transcript === null ? null : transcriptJsonText(fields.transcript),
    sets.has('startTime'),
    sets.has('speakerSeparation'),
    sets.has('transcript'),
    write.tags.length > 0 ? JSON.stringify(inKeyOrder(write.tags)) : null,
    write.analysis?.runId ?? null,
    write.analysis?.jobKind ?? null,
    upload?.filename ?? null,
    upload?.contentType ?? null,
    upload?.mediaKind ?? null,
    upload?.objectKey ?? null,
    upload ? upload.expiresAt.toISOString() : null,
  ]);
  const row = firstRow(rows);
  const failed = failureOf(row);
  if (failed) return failed;
  return {
    outcome: 'ok',
    agentEmail: String(row.agent_address),
    id: String(row.call_uuid),
    state: row.call_state as CreatedCallRow['state'],
    inserted: row.was_inserted === true,
    uploadId: row.new_upload_id === null ? undefined : Number(row.new_upload_id),
    analysisQueued: row.analysis_queued === true,
  };
}

/** call/add_tags's one statement: the agent, the pair's call, its tags and the event. */
export async function writeAddedTags(
  db: Db,
  companyId: string,
  write: { agentEmail: string; conversationId: string; tags: readonly TagValue[] },
): Promise<{ outcome: 'ok' } | CallCheckFailure> {
  const result = await db.execute(sql`select outcome, to_jsonb(agent_ids) as agent_ids
    from cqs_add_tags(${companyId}, ${write.agentEmail}, ${write.conversationId},
      ${JSON.stringify(inKeyOrder(write.tags))})`);
  return failureOf(rowOf(result)) ?? { outcome: 'ok' };
}

/**
 * POST /calls/{id}/tags's one statement: the call locked when it is the company's and, with
 * `agentUserId`, that agent's; its tags, updated_at and event. False when there is no such call.
 */
export async function writeTagsOfCall(
  db: Db,
  companyId: string,
  write: { callUuid: string; agentUserId: string | undefined; tags: readonly TagValue[] },
): Promise<boolean> {
  const result =
    await db.execute(sql`select outcome from cqs_add_tags_to_call(${companyId}, ${write.callUuid},
    ${write.agentUserId ?? null}, ${JSON.stringify(inKeyOrder(write.tags))})`);
  return rowOf(result)?.outcome === 'ok';
}

/**
 * call/start's one statement: the agent, the product when one is given, the pair's call locked (or made
 * live when there is none), the transition and its events. A stopped call is the `call-stopped` failure.
 */
export async function writeStartedCall(
  db: Db,
  companyId: string,
  write: {
    viewer: CallViewer;
    agentEmail: string;
    conversationId: string;
    productId: number | undefined;
    startTime: number;
    metadata: Record<string, unknown> | undefined;
  },
): Promise<{ outcome: 'ok' } | CallCheckFailure> {
  const result = await db.execute(sql`select outcome, to_jsonb(agent_ids) as agent_ids, product_status
    from cqs_start_call(${companyId}, ${write.viewer.userId}, ${write.viewer.role === 'admin'},
      ${write.agentEmail}, ${write.conversationId}, ${write.productId ?? null}, ${write.startTime},
      ${json(write.metadata)})`);
  return failureOf(rowOf(result)) ?? { outcome: 'ok' };
}

/** call/stop's one statement: the agent, the pair's call locked, the transition and its event. */
export async function writeStoppedCall(
  db: Db,
  companyId: string,
  write: { agentEmail: string; conversationId: string; metadata: Record<string, unknown> | undefined },
): Promise<{ outcome: 'ok' } | CallCheckFailure> {
  const result = await db.execute(sql`select outcome, to_jsonb(agent_ids) as agent_ids
    from cqs_stop_call(${companyId}, ${write.agentEmail}, ${write.conversationId}, ${json(write.metadata)})`);
  return failureOf(rowOf(result)) ?? { outcome: 'ok' };
}
