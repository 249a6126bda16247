/** Answers every route shares (decisions 7–8, issue 2): request ids, JSON errors, the body limit. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { type Harness, startHarness } from './helpers/harness.ts';

describe('HTTP basics', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('pglite', { BODY_LIMIT: '2048' });
  });
  after(() => h.close());

  it('puts an X-Request-Id on every answer, errors included, and logs it', async () => {
    const c = await h.company();
    const answers = [
      await h.request({ method: 'GET', url: '/healthz' }),
      await h.request({ method: 'GET', url: '/api/v1/product/list', key: c.key }),
      await h.request({ method: 'GET', url: '/api/v1/product/list' }),
      await h.request({ method: 'GET', url: '/no/such/route' }),
    ];
    const ids = answers.map((a) => String(a.headers['x-request-id']));
    for (const id of ids) assert.match(id, /^[0-9a-f-]{36}$/);
    assert.equal(new Set(ids).size, ids.length, 'each request has its own id');
    assert.ok(h.logs().includes(`"reqId":"${ids[1]}"`));
  });

  it('lets no browser or proxy keep what a key reads (Cache-Control: no-store), errors included', async () => {
    const c = await h.company();
    const admin = await c.addKey(c.admin.id, ['calls', 'calls:read', 'events:read', 'webhooks']);
    const created = await h.request({
      method: 'POST',
      url: '/api/v1/call/create',
      key: c.key,
      body: { agent_email: c.agent.email, product_id: c.productId, conversation_id: 'cache-control' },
    });
    assert.equal(created.statusCode, 200, created.body);
    const listed = await h.request({ method: 'GET', url: '/api/v1/calls', key: admin.key });
    const id = (listed.json() as { calls: { id: string }[] }).calls[0]?.id;
    for (const url of [
      '/api/v1/product/list',
      '/api/v1/calls',
      `/api/v1/calls/${id}`,
      '/api/v1/events',
      '/api/v1/webhooks',
      '/api/v1/calls/00000000-0000-0000-0000-000000000000',
    ]) {
      const res = await h.request({ method: 'GET', url, key: admin.key });
      assert.equal(res.headers['cache-control'], 'no-store', `${url}: ${res.statusCode}`);
    }
    assert.equal(created.headers['cache-control'], 'no-store');
  });

  it('answers GET / with a pointer to the docs: HTML for a browser, JSON otherwise', async () => {
    const page = await h.request({ method: 'GET', url: '/', headers: { accept: 'text/html,*/*' } });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.body, /<a href="\/api\/v1\/docs">/);
    const json = await h.request({ method: 'GET', url: '/' });
    assert.equal(json.statusCode, 200);
    const { links } = json.json();
    assert.equal(links.docs, '/api/v1/docs');
    for (const url of Object.values(links) as string[]) {
      const linked = await h.request({ method: 'GET', url });
      assert.ok([200, 302].includes(linked.statusCode), `${url}: ${linked.statusCode}`);
    }
  });

  it('answers an unknown route with a JSON 404', async () => {
    const res = await h.request({ method: 'POST', url: '/api/v1/nothing' });
    assert.equal(res.statusCode, 404);
    assert.equal(typeof res.json().error, 'string');
  });

  it('answers a path that cannot be routed with the API error shape', async () => {
    const c = await h.company();
    for (const [url, status] of [
      ['/api/v1/calls/%ZZ', 400],
      ['/api/v1/calls/%FF', 400],
      [`/api/v1/calls/${'a'.repeat(5000)}`, 414],
    ] as const) {
      const res = await h.request({ method: 'GET', url, key: c.key });
      assert.equal(res.statusCode, status, url.slice(0, 40));
      assert.match(String(res.headers['content-type']), /^application\/json; charset=utf-8/);
      assert.deepEqual(Object.keys(res.json()), ['error']);
    }
  });

  it('answers a body over BODY_LIMIT with a JSON 413', async () => {
    const c = await h.company();
    const res = await h.request({
      method: 'POST',
      url: '/api/v1/call/create',
      key: c.key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        agent_email: c.admin.email,
        product_id: c.productId,
        padding: 'x'.repeat(4096),
      }),
    });
    assert.equal(res.statusCode, 413);
    assert.match(res.json().error, /too large/);
  });

  it('answers a JSON body that is not UTF-8 with 400, and stores nothing of it', async () => {
    const c = await h.company();
    const body = Buffer.concat([
      Buffer.from(`{"agent_email":"${c.agent.email}","product_id":${c.productId},"conversation_id":"bad-`),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ]);
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v1/call/create',
      headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
      payload: body,
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.match(res.json().error, /not valid UTF-8/);
    const [row] = await h.services.database.db
      .execute(sql`select count(*)::int as n from conversations
      where company_id = ${c.id}::uuid`)
      .then((r) => (r as unknown as { rows: { n: number }[] }).rows);
    assert.equal(row?.n, 0);
  });
});

describe('request logging at LOG_LEVEL=warn', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('pglite', { LOG_LEVEL: 'warn' });
  });
  after(() => h.close());

  it('writes nothing for a request that went well, and a failed one with its request id', async () => {
    const c = await h.company();
    const ok = await h.request({ method: 'GET', url: '/api/v1/product/list', key: c.key });
    assert.equal(ok.statusCode, 200);
    assert.ok(!h.logs().includes(String(ok.headers['x-request-id'])), 'nothing logged for it');
    // A key this process has not seen needs the look-up, which fails while its table is away: a 500.
    const other = await h.company();
    await h.services.database.db.execute(sql`alter table api_keys rename to api_keys_away`);
    let failed: Awaited<ReturnType<Harness['request']>>;
    try {
      failed = await h.request({ method: 'GET', url: '/api/v1/product/list', key: other.key });
    } finally {
      await h.services.database.db.execute(sql`alter table api_keys_away rename to api_keys`);
    }
    assert.equal(failed.statusCode, 500);
    const line = h
      .logs()
      .split('\n')
      .find((l) => l.includes('unhandled error'));
    assert.ok(line, 'the failure is logged');
    const logged = JSON.parse(line) as { level: number; reqId: string };
    assert.equal(logged.level, 50);
    assert.equal(logged.reqId, failed.headers['x-request-id']);
  });
});
