import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLruCache } from '../src/adapters/cache/lru.ts';
import type { Principal } from '../src/domain/access/principal.ts';
import { createFinalRecordCache } from '../src/domain/handoffs/final-cache.ts';
import { createHandoffReader, type HandoffReader } from '../src/domain/handoffs/reader.ts';
import type { Handoff } from '../src/domain/handoffs/records.ts';
import { createHandoffWatcher, type HandoffWatcher } from '../src/domain/handoffs/watch.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { createRecord, finalizeRecord, patchRecord, sleep } from './helpers/handoffs.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

function principalOf(c: TestCompany): Principal {
  return { companyId: c.id, userId: c.admin.id, role: 'admin', keyId: 'test', scopes: ['calls'] };
}

describe('the LRU cache of final records', () => {
  it('keeps at most its capacity, forgetting the least recently used; capacity 0 keeps nothing', () => {
    const cache = createLruCache<number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    assert.equal(cache.get('a'), 1);
    cache.set('c', 3);
    assert.equal(cache.get('b'), undefined);
    assert.equal(cache.get('a'), 1);
    assert.equal(cache.get('c'), 3);
    assert.equal(cache.size, 2);
    const none = createLruCache<number>(0);
    none.set('a', 1);
    assert.equal(none.get('a'), undefined);
  });
});

for (const backend of BACKENDS) {
  describe(`handoff watcher and reader (${backend})`, () => {
    let h: Harness;
    let watcher: HandoffWatcher;
    let reader: HandoffReader;
    before(async () => {
      h = await startHarness(backend);
      watcher = createHandoffWatcher(h.services.database.db, h.services.notifier);
      reader = createHandoffReader({
        db: h.services.database.db,
        watcher,
        cache: createFinalRecordCache(createLruCache<Handoff>(100), h.services.notifier),
      });
    });
    after(() => h.close());

    it('shares one watch among the waiters of a record, and releases it when they are answered', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c);
      const waits = Array.from({ length: 10 }, () => reader.read(principalOf(c), id, { waitMs: 10_000 }));
      await sleep(200);
      assert.equal(watcher.watched, 1);
      await patchRecord(h, c, id, { a: 1 });
      for (const handoff of await Promise.all(waits)) {
        assert.equal(handoff.version, 2);
        assert.deepEqual(handoff.view.metadata, { a: 1 });
      }
      assert.equal(watcher.watched, 0);
    });

    it('stops waiting when the client goes away, and releases the watch', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c);
      const gone = new AbortController();
      const started = performance.now();
      const waiting = reader.read(principalOf(c), id, { waitMs: 20_000, signal: gone.signal });
      await sleep(200);
      gone.abort();
      const handoff = await waiting;
      assert.ok(performance.now() - started < 2000);
      assert.equal(handoff.version, 1);
      assert.equal(watcher.watched, 0);
    });

    it('answers a known older version at once, and waits on the current one', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c);
      await patchRecord(h, c, id, { a: 1 });
      const stale = await reader.read(principalOf(c), id, { waitMs: 10_000, knownVersions: [1] });
      assert.equal(stale.version, 2);
      const started = performance.now();
      const current = await reader.read(principalOf(c), id, { waitMs: 300, knownVersions: [2] });
      assert.equal(current.version, 2);
      assert.ok(performance.now() - started >= 250);
      assert.equal(watcher.watched, 0);
    });

    it('answers every waiter at once on close, and reads without waiting after it', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c);
      const own = createHandoffReader({
        db: h.services.database.db,
        watcher,
        cache: h.services.handoffCache,
      });
      const waiting = own.read(principalOf(c), id, { waitMs: 20_000 });
      await sleep(200);
      own.close();
      assert.equal((await waiting).version, 1);
      const started = performance.now();
      await own.read(principalOf(c), id, { waitMs: 20_000 });
      assert.ok(performance.now() - started < 2000);
      await finalizeRecord(h, c, id);
    });
  });
}
