/** Slow clients (slowloris) must not stop others being served, and are dropped after the headers timeout. */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness } from './helpers/harness.ts';

describe('slow clients', () => {
  let h: Harness;
  let port: number;
  before(async () => {
    h = await startHarness('pglite', { HEADERS_TIMEOUT: '2' });
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    port = (h.app.server.address() as { port: number }).port;
  });
  after(() => h.close());

  it('serves others while 100 clients trickle their headers, and drops the trickling ones', async () => {
    const c = await h.company();
    const sockets: Socket[] = [];
    const closed: Promise<number>[] = [];
    const started = Date.now();
    for (let i = 0; i < 100; i++) {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => {});
      s.write('GET /api/v1/product/list HTTP/1.1\r\nHost: x\r\n');
      closed.push(new Promise((resolve) => s.on('close', () => resolve(Date.now() - started))));
      sockets.push(s);
    }
    const trickle = setInterval(() => {
      for (const s of sockets) if (!s.destroyed) s.write('X-Slow: 1\r\n');
    }, 500);
    try {
      for (let i = 0; i < 10; i++) {
        const res = await fetch(`http://127.0.0.1:${port}/api/v1/product/list`, {
          headers: { authorization: `Bearer ${c.key}` },
        });
        assert.equal(res.status, 200);
      }
      const times = await Promise.all(closed);
      assert.ok(Math.max(...times) < 10_000, `slow clients dropped after ${Math.max(...times)} ms`);
    } finally {
      clearInterval(trickle);
      for (const s of sockets) s.destroy();
    }
  });
});
