import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { createFanOut } from '../src/adapters/notify/notifier.ts';
import { createRecord, patchRecord, readRecord, sleep } from './helpers/handoffs.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

/** Resolves when `listener` has been called, or after `ms` with false. */
function called(ms: number): { listener: () => void; heard: Promise<boolean>; count: () => number } {
  let count = 0;
  let resolve: (value: boolean) => void = () => {};
  const heard = new Promise<boolean>((r) => {
    resolve = r;
    setTimeout(() => r(false), ms);
  });
  return {
    listener: () => {
      count++;
      resolve(true);
    },
    heard,
    count: () => count,
  };
}

describe('fan-out of notifications', () => {
  it('calls the listeners of one key, each subscription once, and forgets unsubscribed ones', () => {
    const fanOut = createFanOut();
    const calls: string[] = [];
    const a = fanOut.add('k1', () => calls.push('a'));
    fanOut.add('k1', () => calls.push('b'));
    fanOut.add('k2', () => calls.push('c'));
    fanOut.add('k1', () => {
      throw new Error('a broken listener');
    });
    fanOut.dispatch('k1');
    assert.deepEqual(calls, ['a', 'b']);
    a();
    a();
    fanOut.dispatch('k1');
    assert.deepEqual(calls, ['a', 'b', 'b']);
    fanOut.dispatchAll();
    assert.deepEqual(calls.slice(3).sort(), ['b', 'c']);
    assert.equal(fanOut.size, 3);
  });
});

for (const backend of BACKENDS) {
  describe(`change notifier (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    it('hears a committed change of a record, by company and id, and nothing after unsubscribing', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c);
      const other = await createRecord(h, c);
      const mine = called(3000);
      const theirs = called(500);
      const stop = await h.services.notifier.subscribe(`${c.id}:${id}`, mine.listener);
      const stopOther = await h.services.notifier.subscribe(`${c.id}:${other.id}`, theirs.listener);
      await patchRecord(h, c, id, { a: 1 });
      assert.equal(await mine.heard, true);
      assert.equal(await theirs.heard, false);
      stop();
      stopOther();
      const before = mine.count();
      await patchRecord(h, c, id, { a: 2 });
      await sleep(200);
      assert.equal(mine.count(), before);
    });

    it('is told by the database whoever writes: a plain SQL UPDATE wakes a long poll', async () => {
      const c = await h.company();
      const { id, etag } = await createRecord(h, c);
      const waiting = readRecord(h, c, id, { wait: 10, etag });
      await sleep(200);
      await h.services.database.db.execute(
        sql`update call_handoffs set metadata = '{"by":"operator"}' where company_id = ${c.id} and id = ${id}`,
      );
      const res = await waiting;
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json().metadata, { by: 'operator' });
    });
  });
}

describe('change notifier after a lost connection (postgres)', {
  skip: !BACKENDS.includes('postgres'),
}, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('postgres');
  });
  after(() => h.close());

  async function killListener(): Promise<number> {
    const result = await h.services.database.db.execute(
      sql`select pg_terminate_backend(pid) as killed from pg_stat_activity
          where datname = current_database() and query ilike 'LISTEN%' and pid <> pg_backend_pid()`,
    );
    return (result as unknown as { rows: unknown[] }).rows.length;
  }

  it('reconnects, and wakes waiting readers again, when the LISTEN connection is killed', async () => {
    const c = await h.company();
    const { id, etag } = await createRecord(h, c);
    // A waiter makes the notifier listen; kill its connection while the waiter waits.
    const waiting = readRecord(h, c, id, { wait: 15, etag });
    await sleep(300);
    assert.equal(await killListener(), 1);
    // Reconnection takes about a second; a change after it must still wake the waiter.
    await sleep(2000);
    const started = performance.now();
    const patched = await patchRecord(h, c, id, { after: 'reconnect' });
    const res = await waiting;
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers.etag, patched.headers.etag);
    assert.ok(performance.now() - started < 3000);
    // And a new waiter works on the new connection.
    const next = readRecord(h, c, id, { wait: 10, etag: String(res.headers.etag) });
    await sleep(200);
    await patchRecord(h, c, id, { again: true });
    assert.equal((await next).statusCode, 200);
  });
});
