/** Test helpers of the call endpoints: requests with a company's key, and direct reads of what was stored. */
import { and, asc, eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { conversations, conversationTags, uploads } from '../../src/adapters/db/schema.ts';
import type { TestCompany } from './fixtures.ts';
import type { Harness } from './harness.ts';

/** POSTs a JSON body with the company's admin `calls` key (or `key`). */
export function post(
  h: Harness,
  c: TestCompany,
  url: string,
  body: unknown,
  key: string = c.key,
): Promise<LightMyRequestResponse> {
  return h.request({ method: 'POST', url, key, body });
}

/** Creates a call of the company's agent and product through call/create (no transcript, no recording). */
export async function createCall(h: Harness, c: TestCompany, conversationId: string): Promise<void> {
  const res = await post(h, c, '/api/v1/call/create', {
    agent_email: c.agent.email,
    product_id: c.productId,
    conversation_id: conversationId,
  });
  if (res.statusCode !== 200) throw new Error(`call/create answered ${res.statusCode}: ${res.body}`);
}

/** The company's conversations, oldest first. */
export async function conversationsOf(h: Harness, c: TestCompany) {
  return h.services.database.db
    .select()
    .from(conversations)
    .where(eq(conversations.companyId, c.id))
    .orderBy(asc(conversations.createdAt), asc(conversations.conversationId));
}

/** The one conversation of the company with this conversation_id (fails when there is not exactly one). */
export async function conversationOf(h: Harness, c: TestCompany, conversationId: string) {
  const rows = await h.services.database.db
    .select()
    .from(conversations)
    .where(and(eq(conversations.companyId, c.id), eq(conversations.conversationId, conversationId)));
  if (rows.length !== 1) throw new Error(`expected one conversation ${conversationId}, found ${rows.length}`);
  return rows[0] as (typeof rows)[number];
}

/** The tags of a conversation as {key: [type, value]}. */
export async function tagsOf(h: Harness, c: TestCompany, conversationUuid: string) {
  const rows = await h.services.database.db
    .select()
    .from(conversationTags)
    .where(
      and(eq(conversationTags.companyId, c.id), eq(conversationTags.conversationUuid, conversationUuid)),
    );
  return Object.fromEntries(rows.map((r) => [r.key, [r.type, r.value]]));
}

/** The company's uploads, by id. */
export async function uploadsOf(h: Harness, c: TestCompany) {
  return h.services.database.db
    .select()
    .from(uploads)
    .where(eq(uploads.companyId, c.id))
    .orderBy(asc(uploads.id));
}

/** How many conversations, tags and uploads the company has: all zero means nothing was written. */
export async function footprint(h: Harness, c: TestCompany) {
  const db = h.services.database.db;
  const [convs, tags, ups] = await Promise.all([
    db.select().from(conversations).where(eq(conversations.companyId, c.id)),
    db.select().from(conversationTags).where(eq(conversationTags.companyId, c.id)),
    db.select().from(uploads).where(eq(uploads.companyId, c.id)),
  ]);
  return { conversations: convs.length, tags: tags.length, uploads: ups.length };
}

/** A footprint with nothing in it. */
export const NOTHING = { conversations: 0, tags: 0, uploads: 0 };

/**
 * Creates a call through call/create with a recording to upload, and PUTs `bytes` to its signed URL (the
 * embedded storage, through inject). Answers the upload's id.
 */
export async function createCallWithRecording(
  h: Harness,
  c: TestCompany,
  call: { conversationId: string; filename: string; contentType: string; speaker?: Record<string, unknown> },
  bytes: Buffer,
): Promise<number> {
  const created = await post(h, c, '/api/v1/call/create', {
    agent_email: c.agent.email,
    product_id: c.productId,
    conversation_id: call.conversationId,
    filename: call.filename,
    content_type: call.contentType,
    ...(call.speaker ? { speaker: call.speaker } : {}),
  });
  if (created.statusCode !== 200)
    throw new Error(`call/create answered ${created.statusCode}: ${created.body}`);
  const answer = created.json() as { upload_url: string; upload_content_type: string; upload_id: number };
  await putUpload(h, answer, bytes);
  return answer.upload_id;
}

/** PUTs `bytes` to the signed URL of a call/create answer (the embedded storage, through inject). */
export async function putUpload(
  h: Harness,
  answer: { upload_url?: string; upload_content_type?: string },
  bytes: Buffer,
): Promise<void> {
  const url = new URL(answer.upload_url as string);
  const put = await h.app.inject({
    method: 'PUT',
    url: `${url.pathname}${url.search}`,
    headers: { 'content-type': answer.upload_content_type as string },
    payload: bytes,
  });
  if (put.statusCode !== 200) throw new Error(`the upload answered ${put.statusCode}: ${put.body}`);
}

/** A call as GET /api/v1/calls/{id} shows it, found by its conversation_id (with a `calls:read` key). */
export async function callDetailOf(h: Harness, key: string, conversationId: string) {
  const list = await h.request({
    method: 'GET',
    url: `/api/v1/calls?conversation_id=${encodeURIComponent(conversationId)}`,
    key,
  });
  const id = (list.json() as { calls?: { id: string }[] }).calls?.[0]?.id;
  if (!id) throw new Error(`no call ${conversationId}: ${list.body}`);
  return (await h.request({ method: 'GET', url: `/api/v1/calls/${id}`, key })).json();
}
