/**
 * The OpenAPI document lists what every authenticated operation can answer, with the headers decision 8
 * gives those answers: `WWW-Authenticate` on a 401, `Retry-After` on a 429 and a 503, and 413 and 415 on
 * every operation that reads a body, those that take none included (they still refuse a body past
 * BODY_LIMIT, or one that is not JSON). Webhook create and PATCH answered 413 without listing it, and
 * the headers were only in the descriptions' text.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addWebhookEndpoint } from './helpers/events.ts';
import { type Harness, startHarness } from './helpers/harness.ts';

type Response = { headers?: Record<string, unknown> };
type Operation = { security?: unknown[]; responses: Record<string, Response> };

describe('error answers in the OpenAPI document', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('pglite', { BODY_LIMIT: '2048', WEBHOOK_ALLOW_PRIVATE: 'true' });
  });
  after(() => h.close());

  it('lists 413 and 415 where a body is read, and the headers of 401, 429 and 503', async () => {
    const document = (await h.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
      paths: Record<string, Record<string, Operation>>;
    };
    const missing: string[] = [];
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (operation.security?.length === 0) continue; // public: its own answers
        const name = `${method.toUpperCase()} ${path}`;
        const statuses = method === 'get' || method === 'head' ? [401, 429, 503] : [401, 413, 415, 429, 503];
        for (const status of statuses) {
          if (!operation.responses[status]) missing.push(`${name} ${status}`);
        }
        if (!operation.responses[401]?.headers?.['WWW-Authenticate'])
          missing.push(`${name} 401 WWW-Authenticate`);
        for (const status of [429, 503]) {
          if (!operation.responses[status]?.headers?.['Retry-After'])
            missing.push(`${name} ${status} Retry-After`);
        }
      }
    }
    assert.deepEqual(missing, []);
  });

  it('answers as listed: 413 on webhook create and PATCH, 415 on a DELETE sent a body not JSON', async () => {
    const c = await h.company();
    const { id, key } = await addWebhookEndpoint(h, c, { url: 'http://127.0.0.1:9/hook' });
    const long = { url: 'http://127.0.0.1:9/hook', description: 'x'.repeat(4000) };
    const created = await h.request({ method: 'POST', url: '/api/v1/webhooks', key, body: long });
    assert.equal(created.statusCode, 413, created.body);
    const patched = await h.request({ method: 'PATCH', url: `/api/v1/webhooks/${id}`, key, body: long });
    assert.equal(patched.statusCode, 413, patched.body);
    const deleted = await h.app.inject({
      method: 'DELETE',
      url: `/api/v1/webhooks/${id}`,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' },
      payload: 'x',
    });
    assert.equal(deleted.statusCode, 415, deleted.body);
  });
});
