import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness } from './helpers/harness.ts';

describe('OpenAPI document and docs page', () => {
  let h: Harness;
  let doc: {
    openapi: string;
    info: { version: string };
    paths: Record<
      string,
      Record<string, { security?: unknown[]; responses: Record<string, unknown>; summary?: string }>
    >;
    components: { securitySchemes: Record<string, Record<string, unknown>> };
  };
  before(async () => {
    h = await startHarness('pglite');
    doc = (await h.request({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  });
  after(() => h.close());

  it('is OpenAPI 3.1 with the API version 1.0.0', () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.version, '1.0.0');
  });

  it('documents every route that is not explicitly hidden', () => {
    const toOpenApi = (url: string) => url.replace(/:([A-Za-z_]+)/g, '{$1}');
    const documented = h.routes.filter((r) => !r.hidden && !r.url.startsWith('/api/v1/docs'));
    assert.ok(documented.length >= 3);
    for (const route of documented) {
      for (const method of [route.method].flat()) {
        if (method === 'HEAD') continue;
        const op = doc.paths[toOpenApi(route.url)]?.[method.toLowerCase()];
        assert.ok(op, `${method} ${route.url} is in the document`);
        assert.ok(op.summary, `${method} ${route.url} has a summary`);
      }
    }
  });

  it('declares error bodies and both security schemes on every authenticated operation', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/v1/')) continue;
      for (const [method, op] of Object.entries(ops)) {
        assert.deepEqual(op.security, [{ bearerAuth: [] }, { apiKeyQuery: [] }], `${method} ${path}`);
        for (const status of ['401', '403']) assert.ok(op.responses[status], `${method} ${path} ${status}`);
      }
    }
    assert.equal(doc.components.securitySchemes.bearerAuth?.scheme, 'bearer');
    assert.equal(doc.components.securitySchemes.apiKeyQuery?.['x-deprecated'], true);
  });

  it('serves the docs page with local assets only', async () => {
    const page = await h.request({ method: 'GET', url: '/api/v1/docs/' });
    assert.equal(page.statusCode, 200);
    const refs = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
    assert.ok(refs.length > 0);
    for (const ref of refs) {
      assert.ok(!/^(https?:)?\/\//.test(ref), `${ref} is local`);
      const asset = await h.request({ method: 'GET', url: new URL(ref, 'http://x/api/v1/docs/').pathname });
      assert.equal(asset.statusCode, 200, ref);
    }
    const init = await h.request({ method: 'GET', url: '/api/v1/docs/static/swagger-initializer.js' });
    assert.match(init.body, /"validatorUrl":\s*null/, 'no call to the public validator');
    // Served over plain http on a private network (not loopback, which browsers exempt), a page whose policy
    // upgrades insecure requests asks for its assets over https and stays blank.
    const index = await h.request({ method: 'GET', url: '/api/v1/docs/static/index.html' });
    const csp = String(index.headers['content-security-policy']);
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /upgrade-insecure-requests|validator\.swagger\.io/);
  });
});
