/**
 * A request body the document marks optional can be left out: @fastify/swagger marked every body required,
 * so generated clients had to send one to call-handoff create and finalize, which take none. The routes that
 * take an absent body as `{}` (optional-body.ts) are exactly those marked `required: false`, and each answers
 * a request without a body as it answers `{}`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRecord } from './helpers/handoffs.ts';
import { type Harness, startHarness } from './helpers/harness.ts';

type Operation = { requestBody?: { required?: boolean }; responses: Record<string, unknown> };

describe('optional request bodies in the OpenAPI document', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('pglite', { WEBHOOK_ALLOW_PRIVATE: 'true' });
  });
  after(() => h.close());

  it('marks a body optional exactly where the route takes none, and such a route answers without one', async () => {
    const document = (await h.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
      paths: Record<string, Record<string, Operation>>;
    };
    const optional: string[] = [];
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (operation.requestBody?.required === false) optional.push(`${method.toUpperCase()} ${path}`);
      }
    }
    assert.deepEqual(optional.sort(), [
      'POST /api/v1/call-handoff',
      'POST /api/v1/call-handoff/{handoff_id}/finalize',
    ]);

    const c = await h.company();
    const { id: handoffId } = await createRecord(h, c);
    const requests: [string, string, string, number][] = [
      ['POST', '/api/v1/call-handoff', c.writerKey, 201],
      ['POST', `/api/v1/call-handoff/${handoffId}/finalize`, c.writerKey, 200],
    ];
    for (const [method, url, key, status] of requests) {
      const res = await h.app.inject({
        method: method as 'POST',
        url,
        headers: { authorization: `Bearer ${key}` },
      });
      assert.equal(res.statusCode, status, `${method} ${url}: ${res.body}`);
    }
  });
});
