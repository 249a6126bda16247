/** Test helpers of the read side: keys with the read scopes, and calls made through call/create. */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { TestCompany } from './fixtures.ts';
import type { Harness } from './harness.ts';

/** Keys of the company's admin and agent with `calls:read` and `calls:delete`. */
export interface ReadKeys {
  admin: string;
  agent: string;
}

/** Issues `calls:read` + `calls:delete` keys to the company's admin and agent. */
export async function readKeys(c: TestCompany): Promise<ReadKeys> {
  const scopes = ['calls:read', 'calls:delete'];
  return { admin: (await c.addKey(c.admin.id, scopes)).key, agent: (await c.addKey(c.agent.id, scopes)).key };
}

/** What a test call carries. */
export interface CallSpec {
  conversationId: string;
  startTime?: number;
  agentEmail?: string;
  productId?: number;
  tags?: { key: string; type: string; value: unknown }[];
  transcript?: unknown[];
  filename?: string;
}

/** Makes a call through call/create and returns its `id` as the list shows it; `upload` when a filename was sent. */
export async function makeCall(
  h: Harness,
  c: TestCompany,
  keys: ReadKeys,
  spec: CallSpec,
): Promise<{ id: string; upload?: { upload_id: number; upload_url: string } }> {
  const res = await h.request({
    method: 'POST',
    url: '/api/v1/call/create',
    key: c.key,
    body: {
      agent_email: spec.agentEmail ?? c.agent.email,
      product_id: spec.productId ?? c.productId,
      conversation_id: spec.conversationId,
      ...(spec.startTime !== undefined ? { start_time: spec.startTime } : {}),
      ...(spec.tags ? { tags: spec.tags } : {}),
      ...(spec.transcript ? { transcript: spec.transcript } : {}),
      ...(spec.filename ? { filename: spec.filename } : {}),
    },
  });
  assert.equal(res.statusCode, 200, res.body);
  const list = await h.request({
    method: 'GET',
    url: `/api/v1/calls?conversation_id=${encodeURIComponent(spec.conversationId)}`,
    key: keys.admin,
  });
  assert.equal(list.statusCode, 200, list.body);
  const email = (spec.agentEmail ?? c.agent.email).toLowerCase();
  const item = (list.json().calls as { id: string; agent: { email: string } }[]).find(
    (x) => x.agent.email.toLowerCase() === email,
  );
  assert.ok(item, `call ${spec.conversationId} not listed`);
  const body = res.json();
  return { id: item.id, ...(body.upload_id ? { upload: body } : {}) };
}

/** GET with a key. */
export function get(h: Harness, url: string, key: string): Promise<LightMyRequestResponse> {
  return h.request({ method: 'GET', url, key });
}

/** Every page of a list URL (without cursor) with the key, following next_cursor. */
export async function allPages(h: Harness, url: string, key: string): Promise<{ id: string }[][]> {
  const pages: { id: string }[][] = [];
  let cursor: string | null = null;
  do {
    const sep = url.includes('?') ? '&' : '?';
    const res = await get(h, cursor ? `${url}${sep}cursor=${cursor}` : url, key);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json() as { calls: { id: string }[]; next_cursor: string | null };
    pages.push(body.calls);
    cursor = body.next_cursor;
  } while (cursor);
  return pages;
}
