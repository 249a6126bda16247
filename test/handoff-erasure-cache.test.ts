import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { createLruCache } from '../src/adapters/cache/lru.ts';
import type { ChangeNotifier } from '../src/adapters/notify/notifier.ts';
import { createFinalRecordCache, DELETED_PREFIX } from '../src/domain/handoffs/final-cache.ts';
import type { Handoff } from '../src/domain/handoffs/records.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { finalizeRecord, sleep } from './helpers/handoffs.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { makeCall, readKeys } from './helpers/reads.ts';

/** A notifier driven by hand: `send(key)` is a notification, `send(undefined)` a possible loss. */
function fakeNotifier(): ChangeNotifier & { send(key: string | undefined): void; listening: boolean } {
  const listeners = new Set<(key: string | undefined) => void>();
  return {
    listening: true,
    async subscribe() {
      return () => {};
    },
    async subscribeAll(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    send(key) {
      for (const l of listeners) l(key);
    },
    async close() {},
  };
}

const record = (n: number) => ({ version: n }) as unknown as Handoff;

describe('the cache of final handoff records', () => {
  it('keeps a record read while nothing was erased, and forgets it when its deletion is heard', async () => {
    const notifier = fakeNotifier();
    const cache = createFinalRecordCache(createLruCache(10), notifier);
    await sleep(0);
    cache.beginRead('c:1')(record(1));
    assert.ok(cache.get('c:1'));
    notifier.send('c:1'); // an update (a finalize heard late) changes nothing: final records never change
    assert.ok(cache.get('c:1'));
    notifier.send(`${DELETED_PREFIX}c:1`);
    assert.equal(cache.get('c:1'), undefined);
  });

  it('does not keep a record whose deletion was heard while it was being read', async () => {
    const notifier = fakeNotifier();
    const cache = createFinalRecordCache(createLruCache(10), notifier);
    await sleep(0);
    const keepErased = cache.beginRead('c:1');
    const keepOther = cache.beginRead('c:2');
    notifier.send(`${DELETED_PREFIX}c:1`);
    keepErased(record(1));
    keepOther(record(2));
    assert.equal(cache.get('c:1'), undefined);
    assert.ok(cache.get('c:2'));
  });

  it('forgets everything when notifications may have been lost, and keeps nothing while deaf', async () => {
    const notifier = fakeNotifier();
    const cache = createFinalRecordCache(createLruCache(10), notifier);
    await sleep(0);
    cache.beginRead('c:1')(record(1));
    const during = cache.beginRead('c:2');
    notifier.send(undefined);
    during(record(2));
    assert.equal(cache.size, 0);
    notifier.listening = false;
    cache.beginRead('c:3')(record(3));
    assert.equal(cache.size, 0);
  });
});

/** A call with one final handoff record linked to it; returns the call id and the record id. */
async function callWithFinalRecord(h: Harness, c: TestCompany, name: string) {
  const keys = await readKeys(c);
  const call = await makeCall(h, c, keys, { conversationId: name });
  const created = await h.request({
    method: 'POST',
    url: '/api/v1/call-handoff',
    key: c.writerKey,
    body: { conversation_id: name, metadata: { n: 1 } },
  });
  assert.equal(created.statusCode, 201, created.body);
  const handoffId: string = created.json().handoff_id;
  assert.equal((await finalizeRecord(h, c, handoffId)).statusCode, 200);
  return { callId: call.id, handoffId, eraserKey: keys.admin };
}

const read = (h: Harness, c: TestCompany, id: string) =>
  h.request({ method: 'GET', url: `/api/v1/call-handoff/${id}`, key: c.key });

/** Reads until the record is cached in `h` (the first read after start-up may come before listening). */
async function readUntilCached(h: Harness, c: TestCompany, id: string): Promise<void> {
  for (let i = 0; i < 50 && !h.services.handoffCache.get(`${c.id}:${id}`); i++) {
    assert.equal((await read(h, c, id)).statusCode, 200);
    await sleep(20);
  }
  assert.ok(h.services.handoffCache.get(`${c.id}:${id}`), 'the final record is cached');
}

for (const backend of BACKENDS) {
  describe(`erased final handoff records leave the cache (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    it('DELETE of the call: the cached final record is a 404 at once', async () => {
      const c = await h.company();
      const { callId, handoffId, eraserKey } = await callWithFinalRecord(h, c, 'erase-cached');
      await readUntilCached(h, c, handoffId);
      const del = await h.request({ method: 'DELETE', url: `/api/v1/calls/${callId}`, key: eraserKey });
      assert.equal(del.statusCode, 204, del.body);
      assert.equal((await read(h, c, handoffId)).statusCode, 404);
    });

    it('a deletion by any writer (SQL here, not the erasure code) is heard through the notification', async () => {
      const c = await h.company();
      const { handoffId } = await callWithFinalRecord(h, c, 'erase-by-sql');
      await readUntilCached(h, c, handoffId);
      await h.services.database.db.transaction(async (tx) => {
        await tx.execute(sql`select set_config('cqs.erasing', 'on', true)`);
        await tx.execute(sql`delete from call_handoffs where company_id = ${c.id} and id = ${handoffId}`);
      });
      const deadline = Date.now() + 5000;
      while (h.services.handoffCache.get(`${c.id}:${handoffId}`) && Date.now() < deadline) await sleep(10);
      assert.equal((await read(h, c, handoffId)).statusCode, 404);
    });
  });
}

if (BACKENDS.includes('postgres')) {
  describe('erased final handoff records leave the cache of every process (postgres, two processes)', () => {
    let a: Harness;
    let b: Harness;
    before(async () => {
      a = await startHarness('postgres');
      b = await startHarness('postgres', {}, { shareDatabaseOf: a });
    });
    after(async () => {
      await b.close();
      await a.close();
    });

    it('erased on A, the final record B had cached is a 404 on B within a second', async () => {
      const c = await a.company();
      const { callId, handoffId, eraserKey } = await callWithFinalRecord(a, c, 'two-processes');
      await readUntilCached(b, c, handoffId);
      const del = await a.request({ method: 'DELETE', url: `/api/v1/calls/${callId}`, key: eraserKey });
      assert.equal(del.statusCode, 204, del.body);
      const erasedAt = performance.now();
      let status = 200;
      while (status !== 404 && performance.now() - erasedAt < 1000) {
        status = (await read(b, c, handoffId)).statusCode;
        if (status !== 404) await sleep(10);
      }
      const ms = Math.round(performance.now() - erasedAt);
      assert.equal(status, 404, `B still answered ${status} ${ms} ms after the erasure`);
    });
  });
}
