/**
 * The OpenAPI document lists the headers a success answer carries where a client must read them: the
 * recording's 302 its `Location` (the signed URL) and `Cache-Control`, handoff create's 201 its
 * `Location`, and the deprecated live routes' 200 their `Deprecation` and `Link`. They were set, and
 * tested, but named only in the descriptions' text.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { post } from './helpers/calls.ts';
import { type Harness, startHarness } from './helpers/harness.ts';

type Operation = { responses: Record<string, { headers?: Record<string, unknown> }> };

describe('success headers in the OpenAPI document', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('pglite');
  });
  after(() => h.close());

  it('lists Location, Cache-Control, Deprecation and Link where the answers set them', async () => {
    const document = (await h.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
      paths: Record<string, Record<string, Operation>>;
    };
    const headersOf = (path: string, method: string, status: number) =>
      Object.keys(document.paths[path]?.[method]?.responses[status]?.headers ?? {}).sort();
    assert.deepEqual(headersOf('/api/v1/calls/{id}/recording', 'get', 302), ['Cache-Control', 'Location']);
    assert.ok(headersOf('/api/v1/call-handoff', 'post', 201).includes('Location'));
    for (const path of [
      '/api/v1/live/{conversation_id}/data/sale',
      '/api/v1/live/{conversation_id}/data/customer',
    ])
      assert.deepEqual(headersOf(path, 'post', 200), ['Deprecation', 'Link'], path);
  });

  it('sets the Deprecation header the document describes', async () => {
    const c = await h.company();
    const created = await post(h, c, '/api/v1/call/create', {
      agent_email: c.agent.email,
      product_id: c.productId,
      conversation_id: 'live-doc',
    });
    assert.equal(created.statusCode, 200, created.body);
    const res = await post(h, c, '/api/v1/live/live-doc/data/sale', { closed: true });
    assert.equal(res.statusCode, 200, res.body);
    const document = (await h.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const declared = document.paths['/api/v1/live/{conversation_id}/data/sale'].post.responses[200].headers;
    assert.ok(declared.Deprecation.description.includes(`\`${res.headers.deprecation}\``));
  });
});
