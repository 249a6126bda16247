/**
 * Regression of issue 18 (finding 6): with the database's traffic paused (sockets open, nothing answers),
 * requests on pooled connections hung for the whole outage, /readyz too. With the connect, statement and
 * pool-acquire limits every request answers 503 with Retry-After while the database is still paused.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Harness, startHarness } from './helpers/harness.ts';
import { freePort } from './helpers/process.ts';
import { tcpProxy } from './helpers/tcp-proxy.ts';

describe('PostgreSQL paused (blackholed)', { skip: !process.env.TEST_DATABASE_URL }, () => {
  it('answers 503 with Retry-After while paused, on pooled and new connections, and recovers', async () => {
    const base = await startHarness('postgres');
    const port = await freePort();
    const proxy = tcpProxy(port, Number(new URL(base.databaseUrl as string).port || 5432));
    await proxy.open();
    const url = new URL(base.databaseUrl as string);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    let h: Harness | undefined;
    try {
      h = await startHarness(
        'postgres',
        { DATABASE_URL: url.toString(), DB_CONNECT_TIMEOUT: '1', DB_STATEMENT_TIMEOUT: '1' },
        { shareDatabaseOf: base },
      );
      const app = h;
      const c = await base.company();
      // The calls list queries on every request (the product list is answered from memory since issue 16).
      const reader = await c.addKey(c.admin.id, ['calls:read']);
      const list = () => app.request({ method: 'GET', url: '/api/v1/calls', key: reader.key });
      // Fill the pool with open connections first, so the pause catches requests on pooled connections.
      const warm = await Promise.all(Array.from({ length: 10 }, list));
      assert.ok(warm.every((r) => r.statusCode === 200));

      proxy.pause();
      let paused = true;
      // More requests than pooled connections: some wait for one (acquire), some get a silent one.
      const requests = [
        ...Array.from({ length: 14 }, list),
        app.request({ method: 'GET', url: '/readyz' }),
        app.request({
          method: 'POST',
          url: '/api/v1/call/create',
          key: c.key,
          body: { agent_email: c.agent.email, product_id: c.productId, conversation_id: 'p-1' },
        }),
      ].map((p) => p.then((res) => ({ res, whilePaused: paused })));
      // The pause lasts until every request has answered, or 60 s (far past the limits): a hung request
      // is answered only after the resume, and fails the assertion below.
      const all = Promise.all(requests);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([all, new Promise((r) => (timer = setTimeout(r, 60_000)))]);
      clearTimeout(timer);
      paused = false;
      proxy.resume();
      const answers = await all;
      for (const { res, whilePaused } of answers) {
        assert.ok(whilePaused, `answered only after the resume: ${res.statusCode}`);
        assert.equal(res.statusCode, 503, res.body);
        assert.equal(res.headers['retry-after'], '5');
      }
      // Recovery: a new request succeeds once the traffic flows again.
      let ok = 0;
      for (let i = 0; i < 50 && ok === 0; i++) {
        if ((await list()).statusCode === 200) ok++;
        else await new Promise((r) => setTimeout(r, 200));
      }
      assert.equal(ok, 1, 'recovered after the resume');
    } finally {
      proxy.resume();
      await h?.close();
      await proxy.cut();
      await base.close();
    }
  });
});
