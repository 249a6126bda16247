/**
 * Partial handoff records are answered from memory until a change of them is heard: the writing process
 * answers its own write at once, another process within a second (the NOTIFY at commit), an erased record
 * is a 404, and a process that lost its LISTEN connection caches nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { within } from './helpers/eventually.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { createRecord, finalizeRecord, patchRecord, readRecord } from './helpers/handoffs.ts';
import { BACKENDS, type Harness, runBehindTheService, startHarness } from './helpers/harness.ts';

const versionOf = async (h: Harness, c: TestCompany, id: string) => {
  const res = await readRecord(h, c, id);
  assert.equal(res.statusCode, 200, res.body);
  return String(res.headers.etag);
};

/** Reads until the partial record is cached in `h` (the first reads after start-up may precede LISTEN). */
async function readUntilCached(h: Harness, c: TestCompany, id: string): Promise<void> {
  await within(5000, 'the partial record is cached', async () => {
    await versionOf(h, c, id);
    return h.services.handoffCache.getPartial(`${c.id}:${id}`) !== undefined;
  });
}

for (const backend of BACKENDS) {
  describe(`partial handoff records in memory (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    it('answers a partial record read before from memory, without the table', async () => {
      const c = await h.company();
      const { id, etag } = await createRecord(h, c, { metadata: { a: 1 } });
      await readUntilCached(h, c, id);
      const db = h.services.database.db;
      await db.execute(sql`alter table call_handoffs rename to call_handoffs_away`);
      try {
        const res = await readRecord(h, c, id);
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers.etag, etag);
        assert.equal(res.headers['cache-control'], 'no-store', 'still never cached by clients');
        const other = await h.company();
        assert.notEqual((await readRecord(h, other, id)).statusCode, 200, 'never to another company');
      } finally {
        await db.execute(sql`alter table call_handoffs_away rename to call_handoffs`);
      }
    });

    it("answers this process's own PATCH and finalize at once", async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c);
      await readUntilCached(h, c, id);
      for (let n = 1; n <= 5; n++) {
        const patched = await patchRecord(h, c, id, { n });
        assert.equal(patched.statusCode, 200, patched.body);
        assert.equal(await versionOf(h, c, id), String(patched.headers.etag));
      }
      const final = await finalizeRecord(h, c, id);
      assert.equal(final.statusCode, 200);
      const res = await readRecord(h, c, id);
      assert.equal(res.json().final, true);
      assert.equal(res.headers.etag, final.headers.etag);
    });

    it('answers one version with the same bytes, fresh or from memory (a strong ETag, decision 19)', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c, { metadata: { b: 1, a: [1, 'x'], nested: { z: null } } });
      await readUntilCached(h, c, id);
      const patched = await patchRecord(h, c, id, { c: 'é' });
      const fresh = await readRecord(h, c, id);
      await readUntilCached(h, c, id);
      const cached = await readRecord(h, c, id);
      assert.equal(fresh.headers.etag, patched.headers.etag);
      assert.equal(fresh.body, patched.body, 'the write and the read of one version');
      assert.equal(cached.body, fresh.body, 'a read from memory and one from the database');
      const final = await finalizeRecord(h, c, id);
      const finalRead = await readRecord(h, c, id);
      assert.equal(finalRead.body, final.body);
      assert.equal((await readRecord(h, c, id)).body, final.body);
    });

    it('hears a change and a deletion made behind the service within 1 s', async () => {
      const c = await h.company();
      const { id, etag } = await createRecord(h, c, { metadata: { a: 1 } });
      await readUntilCached(h, c, id);
      await runBehindTheService(h, `update call_handoffs set metadata = '{"a":2}' where id = '${id}'`);
      await within(1000, 'the new version is read', async () => (await versionOf(h, c, id)) !== etag);
      assert.deepEqual((await readRecord(h, c, id)).json().metadata, { a: 2 });
      await readUntilCached(h, c, id);
      await runBehindTheService(
        h,
        `begin; select set_config('cqs.erasing', 'on', true); delete from call_handoffs where id = '${id}'; commit;`,
      );
      await within(
        1000,
        'the erased record is a 404',
        async () => (await readRecord(h, c, id)).statusCode === 404,
      );
    });
  });
}

describe('partial handoff records across two processes (postgres)', {
  skip: !BACKENDS.includes('postgres'),
}, () => {
  let a: Harness;
  let b: Harness;
  before(async () => {
    a = await startHarness('postgres');
    b = await startHarness('postgres', {}, { shareDatabaseOf: a });
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  it('a PATCH through one process is read through the other within 1 s', async () => {
    const c = await a.company();
    const { id } = await createRecord(a, c);
    await readUntilCached(b, c, id);
    const patched = await patchRecord(a, c, id, { step: 'verified' });
    assert.equal(patched.statusCode, 200);
    await within(
      1000,
      'the other process reads the new version',
      async () => (await versionOf(b, c, id)) === String(patched.headers.etag),
    );
  });

  it('caches nothing while LISTEN is lost, and again once it is back', async () => {
    const c = await a.company();
    const { id } = await createRecord(a, c);
    await readUntilCached(b, c, id);
    await b.services.database.db.execute(
      sql`select pg_terminate_backend(pid) from pg_stat_activity
          where datname = current_database() and query ilike 'LISTEN%' and pid <> pg_backend_pid()`,
    );
    await within(2000, 'b sees the loss', () => !b.services.notifier.listening);
    assert.equal(b.services.handoffCache.getPartial(`${c.id}:${id}`), undefined, 'the cache was emptied');
    // A change while b does not listen is read at once: b queries.
    const patched = await patchRecord(a, c, id, { during: 'outage' });
    if (!b.services.notifier.listening) {
      assert.equal(await versionOf(b, c, id), String(patched.headers.etag));
    }
    await within(5000, 'b listens again', () => b.services.notifier.listening);
    await readUntilCached(b, c, id);
  });
});
