import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { SCOPES } from '../src/domain/access/api-keys.ts';
import { installAuth } from '../src/http/auth.ts';
import { installErrorHandler } from '../src/http/error-handler.ts';
import { installRouteAccess, RouteAccessError, registerPublic } from '../src/http/route-access.ts';
import { callStateRoutes } from '../src/http/routes/calls/start-stop.ts';
import { validatorCompiler } from '../src/http/validation.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

type Operation = {
  security?: unknown[];
  responses: Record<string, { description?: string }>;
  description?: string;
  'x-required-scope'?: string;
};

describe('every route declares who may call it', () => {
  let h: Harness;
  let doc: { paths: Record<string, Record<string, Operation>> };
  before(async () => {
    h = await startHarness('pglite');
    doc = (await h.request({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  });
  after(() => h.close());

  it('lists every registered route with a scope or public: true', () => {
    assert.ok(h.routes.length > 10);
    const undecided = h.routes.filter((r) => r.access === undefined);
    assert.deepEqual(undecided, [], 'routes without an access decision');
    for (const r of h.routes) {
      if (r.access && 'scope' in r.access) assert.ok(SCOPES.includes(r.access.scope), r.url);
    }
  });

  it('keeps the API closed: only the docs and the OpenAPI document are public under /api/v1', () => {
    const publicApi = h.routes
      .filter((r) => r.url.startsWith('/api/v1/') && r.access && 'public' in r.access)
      .map((r) => r.url);
    for (const url of publicApi) {
      assert.ok(url === '/api/v1/openapi.json' || url.startsWith('/api/v1/docs'), `${url} is public`);
    }
    const scoped = h.routes.filter((r) => r.access && 'scope' in r.access);
    assert.ok(scoped.some((r) => r.url === '/api/v1/call/start'));
    for (const r of scoped) assert.ok(r.url.startsWith('/api/v1/'), r.url);
  });

  it('derives security, 401/403/429 and the scope of each operation from the declaration', () => {
    const toOpenApi = (url: string) => url.replace(/:([A-Za-z_]+)/g, '{$1}');
    let checked = 0;
    for (const route of h.routes.filter((r) => !r.hidden)) {
      for (const method of [route.method].flat()) {
        if (method === 'HEAD') continue;
        const op = doc.paths[toOpenApi(route.url)]?.[method.toLowerCase()];
        assert.ok(op, `${method} ${route.url} is documented`);
        if (route.access && 'public' in route.access) {
          assert.deepEqual(op.security, [], `${route.url} says it needs no key`);
          assert.equal(op.responses['401'], undefined);
          continue;
        }
        const scope = route.access?.scope;
        assert.deepEqual(op.security, [{ bearerAuth: [] }, { apiKeyQuery: [] }], route.url);
        for (const status of ['400', '401', '403', '429', '503']) assert.ok(op.responses[status], status);
        assert.equal(op['x-required-scope'], scope);
        assert.ok(op.description?.includes(`\`${scope}\``), `${route.url} names its scope`);
        assert.ok(op.responses['403']?.description?.includes(String(scope)));
        checked++;
      }
    }
    assert.ok(checked >= 8, `${checked} authenticated operations`);
  });
});

describe('the registration check', () => {
  const tinyApp = () => {
    const app = Fastify();
    installRouteAccess(app);
    return app;
  };

  it('refuses a route under /api/v1 without a decision, so the app does not start', async () => {
    const app = tinyApp();
    assert.throws(() => app.get('/api/v1/things', async () => ({})), RouteAccessError);
    assert.throws(() => app.get('/healthz', async () => ({})), /declares no access/);
    await app.close();
  });

  it('refuses an unknown scope, and a route both public and scoped', async () => {
    const app = tinyApp();
    assert.throws(
      () => app.get('/api/v1/a', { config: { scope: 'everything' as never } }, async () => ({})),
      /unknown scope/,
    );
    assert.throws(
      () => app.get('/api/v1/b', { config: { scope: 'calls', public: true } }, async () => ({})),
      /both public and scoped/,
    );
    await app.close();
  });

  it('fails the real call routes when one loses its scope', async () => {
    for (const backend of BACKENDS.slice(0, 1)) {
      const h = await startHarness(backend);
      try {
        const app = Fastify();
        // Stands for an edit that deletes `scope` from call/start's config.
        app.addHook('onRoute', (route) => {
          if (route.url === '/api/v1/call/start') route.config = { ...route.config, scope: undefined };
        });
        installRouteAccess(app);
        await assert.rejects(
          async () => {
            await app.register(callStateRoutes, { services: h.services });
            await app.ready();
          },
          (error: Error) => error instanceof RouteAccessError && /call\/start/.test(error.message),
        );
        await app.close().catch(() => {});

        const intact = Fastify();
        intact.setValidatorCompiler(validatorCompiler);
        installRouteAccess(intact);
        await intact.register(callStateRoutes, { services: h.services });
        await intact.ready();
        await intact.close();
      } finally {
        await h.close();
      }
    }
  });

  it('makes every route of a plugin registered with registerPublic public', async () => {
    const app = tinyApp();
    const seen: unknown[] = [];
    app.addHook('onRoute', (route) => {
      seen.push(route.config);
    });
    await registerPublic(
      app,
      async (scope: FastifyInstance) => {
        scope.get('/docs-like', async () => 'ok');
        await scope.register(async (inner) => {
          inner.get('/docs-like/asset', async () => 'ok');
        });
      },
      {},
    );
    await app.ready();
    assert.equal((await app.inject({ url: '/docs-like/asset' })).statusCode, 200);
    assert.ok(seen.length >= 2);
    await app.close();
  });
});

for (const backend of BACKENDS) {
  describe(`requireAdmin (${backend})`, () => {
    let h: Harness;
    let app: FastifyInstance;
    before(async () => {
      h = await startHarness(backend);
      app = Fastify();
      installRouteAccess(app);
      installErrorHandler(app);
      installAuth(app, h.services);
      app.get('/api/v1/admin-thing', { config: { scope: 'events:read', requireAdmin: true } }, async () => ({
        ok: true,
      }));
      await app.ready();
    });
    after(async () => {
      await app.close();
      await h.close();
    });

    const get = (key: string) =>
      app.inject({ url: '/api/v1/admin-thing', headers: { authorization: `Bearer ${key}` } });

    it('lets an admin key with the scope through, and answers 403 to an agent or a missing scope', async () => {
      const c = await h.company();
      const admin = await c.addKey(c.admin.id, ['events:read']);
      const agent = await c.addKey(c.agent.id, ['events:read']);
      assert.equal((await get(admin.key)).statusCode, 200);
      const notAdmin = await get(agent.key);
      assert.equal(notAdmin.statusCode, 403);
      assert.match(notAdmin.json().error, /admin/);
      const noScope = await get(c.key);
      assert.equal(noScope.statusCode, 403);
      assert.match(noScope.json().error, /events:read/);
      assert.equal((await app.inject({ url: '/api/v1/admin-thing' })).statusCode, 401);
    });
  });
}
