import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { finalizeStaleHandoffs } from '../src/adapters/db/repositories/call-handoffs.ts';
import { loadConfig } from '../src/config/config.ts';
import { finalizeStaleHandoffRecords } from '../src/domain/handoffs/records.ts';
import { startService } from '../src/server.ts';
import { startHandoffSweeper } from '../src/worker/handoff-sweeper.ts';
import { makeCompany } from './helpers/fixtures.ts';
import { createRecord, finalizeRecord, patchRecord, readRecord, sleep } from './helpers/handoffs.ts';
import { BACKENDS, createPostgresDatabase, type Harness, startHarness } from './helpers/harness.ts';

const quiet = { info() {}, warn() {} };

for (const backend of BACKENDS) {
  describe(`stale call-handoff records (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    it('finalizes records created longer ago than the limit, even if written recently, and no others', async () => {
      const c = await h.company();
      const old = await createRecord(h, c, { metadata: { a: 1 } });
      const done = await createRecord(h, c);
      const finalBefore = (await finalizeRecord(h, c, done.id)).json();
      await sleep(1200);
      const fresh = await createRecord(h, c);
      const touched = (await patchRecord(h, c, old.id, { b: 2 })).json();
      const count = await finalizeStaleHandoffRecords(h.services.database.db, 1);
      assert.equal(count, 1);
      const swept = (await readRecord(h, c, old.id)).json();
      assert.equal(swept.final, true);
      assert.deepEqual(swept.metadata, touched.metadata, 'the sweep leaves metadata as it is');
      assert.ok(swept.finalized_at > touched.updated_at);
      assert.equal(swept.updated_at, swept.finalized_at);
      assert.equal((await readRecord(h, c, fresh.id)).json().final, false);
      assert.deepEqual(
        (await readRecord(h, c, done.id)).json(),
        finalBefore,
        'final records are not touched',
      );
      assert.equal((await patchRecord(h, c, old.id, { late: 1 })).statusCode, 409);
      assert.equal(
        await finalizeStaleHandoffRecords(h.services.database.db, 1),
        0,
        'a second sweep is a no-op',
      );
    });

    it('finalizes no more records a statement than its batch, even when the table was analysed nearly empty', async () => {
      // Statistics of a near-empty table make PostgreSQL plan a pick inside `(company_id, id) in (…)` as
      // the inner side of a nested loop, run again for each record: each run skipped what the runs before
      // had locked, and one statement finalized every stale record.
      const c = await h.company();
      const db = h.services.database.db;
      await createRecord(h, c);
      await db.execute(sql`analyze call_handoffs`);
      for (let n = 0; n < 20; n++) await createRecord(h, c);
      await sleep(1100);
      for (const limit of [1, 2, 3]) {
        const rows = await finalizeStaleHandoffs(db, 1, limit);
        assert.equal(rows.length, limit, `a batch of ${limit} finalized ${rows.length} records`);
      }
      assert.ok((await finalizeStaleHandoffRecords(db, 1)) >= 15, 'the sweep finalizes the rest');
    });

    it('wakes a long-polling reader when the periodic sweeper finalizes the record', async (t) => {
      const c = await h.company();
      const { id, etag } = await createRecord(h, c);
      await sleep(1100);
      const started = performance.now();
      const waiting = readRecord(h, c, id, { wait: 10, etag });
      await sleep(100);
      const sweeper = startHandoffSweeper({
        db: h.services.database.db,
        staleAfterSeconds: 1,
        intervalSeconds: 1,
        log: quiet,
      });
      try {
        const res = await waiting;
        const ms = performance.now() - started;
        t.diagnostic(`reader woke ${Math.round(ms)} ms after it started waiting`);
        assert.equal(res.statusCode, 200);
        assert.equal(res.json().final, true);
        assert.ok(ms < 3000, `${ms} ms`);
        // It keeps sweeping at its interval.
        const later = await createRecord(h, c);
        await sleep(2600);
        assert.equal((await readRecord(h, c, later.id)).json().final, true);
      } finally {
        await sweeper.stop();
      }
    });

    it('runs in startService when WORKER is on, and stops with it', async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'cqs-sweep-'));
      const pgDb = backend === 'postgres' ? await createPostgresDatabase() : undefined;
      const config = loadConfig({
        DATA_DIR: dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        CQS_BOOTSTRAP: 'false',
        WORKER: 'true',
        HANDOFF_STALE_AFTER: '1',
        HANDOFF_SWEEP_INTERVAL: '1',
        ...(pgDb ? { DATABASE_URL: pgDb.url } : {}),
      });
      const running = await startService(config, () => {});
      try {
        const c = await makeCompany(running.services.database.db);
        const created = await fetch(`${running.url}/api/v1/call-handoff`, {
          method: 'POST',
          headers: { authorization: `Bearer ${c.writerKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ metadata: { a: 1 } }),
        });
        assert.equal(created.status, 201);
        const { handoff_id } = (await created.json()) as { handoff_id: string };
        const etag = created.headers.get('etag') as string;
        // The wait ends when the service finalizes the record on its own, within about two seconds.
        const res = await fetch(`${running.url}/api/v1/call-handoff/${handoff_id}?wait=10`, {
          headers: { authorization: `Bearer ${c.key}`, 'if-none-match': etag },
        });
        assert.equal(res.status, 200);
        const body = (await res.json()) as { final: boolean; metadata: unknown };
        assert.equal(body.final, true);
        assert.deepEqual(body.metadata, { a: 1 });
      } finally {
        await running.stop();
        await pgDb?.drop();
        await rm(dataDir, { recursive: true, force: true });
      }
    });
  });
}
