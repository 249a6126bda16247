/** Helpers of the call-handoff tests: driving records through the API, and rows the API cannot make. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { conversations } from '../../src/adapters/db/schema.ts';
import type { TestCompany } from './fixtures.ts';
import type { Harness } from './harness.ts';

/** The six fields of spec 2.6, sorted. */
export const SIX_FIELDS = ['created_at', 'final', 'finalized_at', 'handoff_id', 'metadata', 'updated_at'];

/** A record as the API shows it. */
export interface HandoffBody {
  handoff_id: string;
  final: boolean;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  finalized_at: string | null;
}

/** Asserts the shape rules of spec 2.6 and 3.1 on one record. */
export function assertRecordShape(body: HandoffBody): void {
  assert.deepEqual(Object.keys(body).sort(), SIX_FIELDS);
  assert.equal(typeof body.final, 'boolean');
  assert.ok(body.metadata !== null && typeof body.metadata === 'object' && !Array.isArray(body.metadata));
  for (const t of [body.created_at, body.updated_at]) assert.ok(!Number.isNaN(Date.parse(t)), t);
  if (body.final) {
    assert.equal(typeof body.finalized_at, 'string');
    assert.ok(!Number.isNaN(Date.parse(body.finalized_at as string)));
  } else {
    assert.equal(body.finalized_at, null, 'a partial record has finalized_at null');
  }
}

/** Creates a record through the API and returns its body and ETag. */
export async function createRecord(
  h: Harness,
  c: TestCompany,
  body: Record<string, unknown> = {},
): Promise<{ id: string; body: HandoffBody; etag: string }> {
  const res = await h.request({ method: 'POST', url: '/api/v1/call-handoff', key: c.writerKey, body });
  assert.equal(res.statusCode, 201, res.body);
  const record = res.json() as HandoffBody;
  return { id: record.handoff_id, body: record, etag: String(res.headers.etag) };
}

/**
 * Sends a request now. `inject` returns a lazy chain that only starts when something calls `then`, so
 * requests meant to race must be started explicitly, in the order they are made.
 */
export function send(
  h: Harness,
  options: Parameters<Harness['request']>[0],
): Promise<LightMyRequestResponse> {
  return h.request(options).then((res) => res);
}

/** PATCHes a record. */
export function patchRecord(h: Harness, c: TestCompany, id: string, metadata: Record<string, unknown>) {
  return send(h, {
    method: 'PATCH',
    url: `/api/v1/call-handoff/${id}`,
    key: c.writerKey,
    body: { metadata },
  });
}

/** Finalizes a record, with a last merge when `metadata` is given. */
export function finalizeRecord(h: Harness, c: TestCompany, id: string, metadata?: Record<string, unknown>) {
  return send(h, {
    method: 'POST',
    url: `/api/v1/call-handoff/${id}/finalize`,
    key: c.writerKey,
    ...(metadata ? { body: { metadata } } : {}),
  });
}

/** Reads a record with the reader key. */
export function readRecord(
  h: Harness,
  c: TestCompany,
  id: string,
  options: { wait?: number; etag?: string } = {},
) {
  return send(h, {
    method: 'GET',
    url: `/api/v1/call-handoff/${id}${options.wait !== undefined ? `?wait=${options.wait}` : ''}`,
    key: c.key,
    ...(options.etag ? { headers: { 'if-none-match': options.etag } } : {}),
  });
}

/** Inserts a conversation of an agent directly (call/create is another issue's endpoint). */
export async function insertConversation(
  h: Harness,
  c: TestCompany,
  agentUserId: string,
  conversationId: string,
): Promise<string> {
  const id = randomUUID();
  await h.services.database.db.insert(conversations).values({
    companyId: c.id,
    id,
    agentUserId,
    conversationId,
    productId: c.productId,
    startTime: Date.now() / 1000,
  });
  return id;
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
