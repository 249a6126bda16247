/**
 * Database outage: a TCP proxy on loopback between the service and PostgreSQL is cut under load (connections
 * destroyed, new ones refused), and later paused (sockets open, no byte moves: a blackholed network). The
 * service must answer 503 with Retry-After (never 500, never hang: within DB_CONNECT_TIMEOUT +
 * DB_STATEMENT_TIMEOUT during the pause), recover by itself each time, lose nothing, and log no key or hash.
 */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { describe, it } from 'node:test';
import pg from 'pg';
import { hashApiKey } from '../src/domain/access/api-keys.ts';
import { createPostgresDatabase } from '../test/helpers/harness.ts';
import { freePort } from '../test/helpers/process.ts';
import { tcpProxy } from '../test/helpers/tcp-proxy.ts';
import { call, figure, SHORT, seedCompany, serve, tempDir } from './lib.ts';

describe('database outage through a loopback proxy', { skip: !process.env.TEST_DATABASE_URL }, () => {
  it('answers 503 with Retry-After, never 500, and recovers by itself', async () => {
    const db = await createPostgresDatabase();
    const dataDir = await tempDir('cqs-outage-');
    const port = await freePort();
    const url = new URL(db.url);
    url.port = String(port);
    const env = { DATA_DIR: dataDir, LOG_LEVEL: 'info', DATABASE_URL: url.toString() };
    const p = tcpProxy(port);
    await p.open();
    const keys = await seedCompany(env, dataDir, 'outage');
    const s = await serve(env);
    const acked: string[] = [];
    let phase: 'before' | 'outage' | 'after' | 'pause' | 'resumed' = 'before';
    const counts = { outage500: 0, outage503: 0, outage503NoRetryAfter: 0, other5xx: 0, pause503: 0 };
    let restoredAt = 0;
    let recoveredAt = 0;
    let resumedAt = 0;
    let recoveredFromPauseAt = 0;
    /** The longest a request sent during the pause took to be answered. */
    let pauseSlowestMs = 0;
    let stop = false;
    try {
      const list = await call(s.port, 'GET', '/api/v1/product/list', keys.calls);
      const productId = (list.body as { products: { id: number }[] }).products[0]?.id;
      let n = 0;
      const worker = async () => {
        while (!stop && n < 200_000) {
          const id = `o-${n++}`;
          const sentIn = phase;
          const sentAt = Date.now();
          const r = await call(s.port, 'POST', '/api/v1/call/create', keys.calls, {
            agent_email: keys.agentEmail,
            product_id: productId,
            conversation_id: id,
            tags: [{ key: 'k', type: 'string', value: id }],
          });
          if (sentIn === 'pause') pauseSlowestMs = Math.max(pauseSlowestMs, Date.now() - sentAt);
          if (r.status === 200) {
            acked.push(id);
            if (phase === 'after' && recoveredAt === 0) recoveredAt = Date.now();
            if (phase === 'resumed' && recoveredFromPauseAt === 0) recoveredFromPauseAt = Date.now();
          } else if (r.status === 500) counts.outage500++;
          else if (r.status === 503) {
            counts.outage503++;
            if (sentIn === 'pause') counts.pause503++;
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
      await new Promise((r) => setTimeout(r, 1000));
      // The blackhole: sockets stay open and silent.
      phase = 'pause';
      p.pause();
      await new Promise((r) => setTimeout(r, SHORT ? 8000 : 20_000));
      phase = 'resumed';
      resumedAt = Date.now();
      p.resume();
      const deadline2 = Date.now() + 30_000;
      while (recoveredFromPauseAt === 0 && Date.now() < deadline2)
        await new Promise((r) => setTimeout(r, 100));
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
    const logs = s.output();
    const leaks = [keys.calls, keys.writer].filter(
      (k) => logs.includes(k) || logs.includes(k.slice(4, 20)) || logs.includes(hashApiKey(k)),
    ).length;
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
    const pauseSeconds = recoveredFromPauseAt ? (recoveredFromPauseAt - resumedAt) / 1000 : -1;
    figure('outage_500_answers', counts.outage500);
    figure('outage_503_answers', counts.outage503);
    figure('outage_503_without_retry_after', counts.outage503NoRetryAfter);
    figure('outage_other_5xx_or_network_errors', counts.other5xx);
    figure('outage_seconds_to_recover', seconds.toFixed(2));
    figure('outage_acknowledged_writes_lost', lost);
    figure('pause_503_answers', counts.pause503);
    figure('pause_slowest_answer_seconds', (pauseSlowestMs / 1000).toFixed(2));
    figure('pause_seconds_to_recover', pauseSeconds.toFixed(2));
    figure('outage_keys_or_hashes_in_logs', leaks);
    assert.equal(counts.outage500, 0);
    assert.ok(counts.outage503 > 0, 'the outage was seen');
    assert.equal(counts.outage503NoRetryAfter, 0);
    assert.ok(seconds >= 0 && seconds < 15, `recovered in ${seconds} s`);
    assert.equal(lost, 0);
    assert.ok(counts.pause503 > 0, 'the pause was seen');
    // DB_CONNECT_TIMEOUT + DB_STATEMENT_TIMEOUT is 5 s; 2 s more for a loaded machine.
    assert.ok(pauseSlowestMs < 7000, `a request took ${pauseSlowestMs} ms during the pause`);
    assert.ok(pauseSeconds >= 0 && pauseSeconds < 15, `recovered from the pause in ${pauseSeconds} s`);
    assert.equal(leaks, 0);
  });
});
