/**
 * Database outage: a TCP proxy on loopback between the service and PostgreSQL is cut under load. The service
 * must answer 503 with Retry-After (never 500), recover by itself when the proxy returns, and lose nothing.
 */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import pg from 'pg';
import { createPostgresDatabase } from '../test/helpers/harness.ts';
import { call, figure, freePort, SHORT, seedCompany, serve, tempDir } from './lib.ts';

/** A loopback TCP proxy to 127.0.0.1:5432 that can be cut and restored. */
function proxy(port: number) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const open = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(5432, '127.0.0.1');
        sockets.add(client);
        sockets.add(upstream);
        client.pipe(upstream).pipe(client);
        const close = () => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
        };
        client.on('error', close).on('close', close);
        upstream.on('error', close).on('close', close);
      }).listen(port, '127.0.0.1', () => resolve());
    });
  const cut = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      sockets.clear();
      if (server) server.close(() => resolve());
      else resolve();
    });
  return { open, cut };
}

describe('database outage through a loopback proxy', { skip: !process.env.TEST_DATABASE_URL }, () => {
  it('answers 503 with Retry-After, never 500, and recovers by itself', async () => {
    const db = await createPostgresDatabase();
    const dataDir = await tempDir('cqs-outage-');
    const port = await freePort();
    const url = new URL(db.url);
    url.port = String(port);
    const env = { DATA_DIR: dataDir, LOG_LEVEL: 'info', DATABASE_URL: url.toString() };
    const p = proxy(port);
    await p.open();
    const keys = await seedCompany(env, dataDir, 'outage');
    const s = await serve(env);
    const acked: string[] = [];
    let phase: 'before' | 'outage' | 'after' = 'before';
    const counts = { outage500: 0, outage503: 0, outage503NoRetryAfter: 0, other5xx: 0 };
    let restoredAt = 0;
    let recoveredAt = 0;
    let stop = false;
    try {
      const list = await call(s.port, 'GET', '/api/v1/product/list', keys.calls);
      const productId = (list.body as { products: { id: number }[] }).products[0]?.id;
      let n = 0;
      const worker = async () => {
        while (!stop && n < 200_000) {
          const id = `o-${n++}`;
          const r = await call(s.port, 'POST', '/api/v1/call/create', keys.calls, {
            agent_email: keys.agentEmail,
            product_id: productId,
            conversation_id: id,
            tags: [{ key: 'k', type: 'string', value: id }],
          });
          if (r.status === 200) {
            acked.push(id);
            if (phase === 'after' && recoveredAt === 0) recoveredAt = Date.now();
          } else if (r.status === 500) counts.outage500++;
          else if (r.status === 503) {
            counts.outage503++;
            if (!r.headers?.get('retry-after')) counts.outage503NoRetryAfter++;
          } else if (r.status >= 500 || r.status === 0) counts.other5xx++;
          if (r.status !== 200) await new Promise((res) => setTimeout(res, 20));
        }
      };
      const load = Promise.all([worker(), worker(), worker(), worker()]);
      await new Promise((r) => setTimeout(r, 1500));
      phase = 'outage';
      await p.cut();
      await new Promise((r) => setTimeout(r, SHORT ? 3000 : 8000));
      phase = 'after';
      restoredAt = Date.now();
      await p.open();
      const deadline = Date.now() + 30_000;
      while (recoveredAt === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 500));
      stop = true;
      await load;
    } finally {
      stop = true;
      if (s.child.exitCode !== null || s.child.signalCode !== null) {
        console.log(`service exited during the outage:\n${s.output().slice(-3000)}`);
      }
      await s.kill();
      await p.cut();
    }
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const rows = await client.query<{ conversation_id: string }>(
      `select c.conversation_id from conversations c join conversation_tags t on t.conversation_uuid = c.id and t.key = 'k'`,
    );
    await client.end();
    const stored = new Set(rows.rows.map((r) => r.conversation_id));
    const lost = acked.filter((id) => !stored.has(id)).length;
    await db.drop();
    await rm(dataDir, { recursive: true, force: true });
    const seconds = recoveredAt ? (recoveredAt - restoredAt) / 1000 : -1;
    figure('outage_500_answers', counts.outage500);
    figure('outage_503_answers', counts.outage503);
    figure('outage_503_without_retry_after', counts.outage503NoRetryAfter);
    figure('outage_other_5xx_or_network_errors', counts.other5xx);
    figure('outage_seconds_to_recover', seconds.toFixed(2));
    figure('outage_acknowledged_writes_lost', lost);
    assert.equal(counts.outage500, 0);
    assert.ok(counts.outage503 > 0, 'the outage was seen');
    assert.equal(counts.outage503NoRetryAfter, 0);
    assert.ok(seconds >= 0 && seconds < 15, `recovered in ${seconds} s`);
    assert.equal(lost, 0);
  });
});
