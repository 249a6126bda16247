/**
 * DB_POOL_MAX: the PostgreSQL connections one process opens, counted by the server itself
 * (pg_stat_activity) while a burst of creates waits for them. The change listener holds one more.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { post } from './helpers/calls.ts';
import { startHarness } from './helpers/harness.ts';

/** Connections the server has to the harness's database during 40 concurrent creates, at most. */
async function peakConnections(poolMax: string): Promise<number> {
  const h = await startHarness('postgres', { DB_POOL_MAX: poolMax });
  const watcher = new pg.Client({ connectionString: h.databaseUrl });
  await watcher.connect();
  try {
    const c = await h.company();
    let peak = 0;
    let done = false;
    const watch = (async () => {
      while (!done) {
        const { rows } = await watcher.query<{ n: number }>(
          'select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
        );
        peak = Math.max(peak, rows[0]?.n ?? 0);
        await sleep(2);
      }
    })();
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        post(h, c, '/api/v1/call/create', {
          agent_email: c.agent.email,
          product_id: c.productId,
          conversation_id: `pool-${i}`,
          transcript: [{ role: 'agent', text: 'Hello.', start: 0, stop: 1 }],
          tags: [{ key: 'queue', type: 'string', value: 'billing' }],
        }),
      ),
    );
    done = true;
    await watch;
    assert.deepEqual(
      answers.map((r) => r.statusCode),
      answers.map(() => 200),
      answers.find((r) => r.statusCode !== 200)?.body,
    );
    return peak;
  } finally {
    await watcher.end();
    await h.close();
  }
}

describe('DB_POOL_MAX', { skip: !process.env.TEST_DATABASE_URL }, () => {
  it('bounds the connections one process opens: the pool plus its change listener', async () => {
    const small = await peakConnections('2');
    assert.ok(small >= 2 && small <= 3, `DB_POOL_MAX=2 opened ${small} connections (pool + listener ≤ 3)`);
    // The same burst with the default opens more, so the bound above is the setting's doing.
    const wide = await peakConnections('10');
    assert.ok(wide > 3, `DB_POOL_MAX=10 opened only ${wide} connections under 40 concurrent creates`);
  });
});
