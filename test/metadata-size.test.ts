/**
 * A stored record's metadata holds at most MAX_METADATA_BYTES of JSON text, as PostgreSQL prints it
 * (migration 0029). Each request was bounded by BODY_LIMIT only, and merges added up: ten PATCHes of 1 MiB
 * made a 9 MB handoff record, which every reader's process then cached. A write that would pass the bound is
 * a 422 and changes nothing, on handoff records and on calls (start and stop merge metadata too).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_METADATA_BYTES } from '../src/domain/limits.ts';
import { createRecord, finalizeRecord, patchRecord, readRecord } from './helpers/handoffs.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

/** `{"<key>": "xxx…"}` whose JSON text, as PostgreSQL prints it, is exactly `bytes` long. */
function oneKeyOf(key: string, bytes: number): Record<string, string> {
  return { [key]: 'x'.repeat(bytes - `{"${key}": ""}`.length) };
}

const TOO_BIG = new RegExp(`more than ${MAX_METADATA_BYTES} bytes of JSON`);

for (const backend of BACKENDS) {
  describe(`metadata size per stored record (${backend})`, () => {
    let h: Harness;
    before(async () => {
      // A byte bound of 3 MiB on each handoff cache, far below what 10,000 records of a MiB would take; a
      // body limit above the records' bound, so that one request can reach it.
      h = await startHarness(backend, {
        HANDOFF_CACHE_BYTES: String(3 * 1024 * 1024),
        BODY_LIMIT: String(2 * MAX_METADATA_BYTES),
      });
    });
    after(() => h.close());

    it('takes a handoff record of exactly the bound and refuses one byte more, in one request', async () => {
      const c = await h.company();
      await createRecord(h, c, { metadata: oneKeyOf('a', MAX_METADATA_BYTES) });
      const over = await h.request({
        method: 'POST',
        url: '/api/v1/call-handoff',
        key: c.writerKey,
        body: { metadata: oneKeyOf('a', MAX_METADATA_BYTES + 1) },
      });
      assert.equal(over.statusCode, 422, over.body.slice(0, 200));
      assert.match(over.json().error, TOO_BIG);
    });

    it('refuses a PATCH or a finalize whose merge would pass the bound, and keeps the record as it was', async () => {
      const c = await h.company();
      // Two halves merged are exactly the bound (`{"a": …}` and `{"b": …}` make `{"a": …, "b": …}`): one byte more.
      const half = MAX_METADATA_BYTES / 2;
      const { id } = await createRecord(h, c, { metadata: oneKeyOf('a', half) });
      const before = await readRecord(h, c, id);
      assert.equal(before.statusCode, 200);

      const patch = await patchRecord(h, c, id, oneKeyOf('b', half + 1));
      assert.equal(patch.statusCode, 422, patch.body.slice(0, 200));
      assert.match(patch.json().error, TOO_BIG);
      const finalize = await finalizeRecord(h, c, id, oneKeyOf('b', half + 1));
      assert.equal(finalize.statusCode, 422, finalize.body.slice(0, 200));

      const after = await readRecord(h, c, id);
      assert.equal(after.body, before.body, 'nothing changed');
      assert.equal(after.headers.etag, before.headers.etag);
      assert.equal(after.json().final, false);

      // Removing a key in the same merge makes room: the bound is on the record, not on the writes.
      const swap = await patchRecord(h, c, id, { a: null, ...oneKeyOf('b', half + 1) });
      assert.equal(swap.statusCode, 200, swap.body.slice(0, 200));
      assert.deepEqual(Object.keys(swap.json().metadata), ['b']);
    });

    it("refuses a call's stop whose metadata merge would pass the bound, and leaves the call live", async () => {
      const c = await h.company();
      const call = { conversation_id: 'big-metadata', agent_email: c.agent.email };
      const half = MAX_METADATA_BYTES / 2;
      const start = await h.request({
        method: 'POST',
        url: '/api/v1/call/start',
        key: c.key,
        body: { ...call, metadata: oneKeyOf('a', half) },
      });
      assert.equal(start.statusCode, 200, start.body.slice(0, 200));
      const stop = await h.request({
        method: 'POST',
        url: '/api/v1/call/stop',
        key: c.key,
        body: { ...call, metadata: oneKeyOf('b', half + 1) },
      });
      assert.equal(stop.statusCode, 422, stop.body.slice(0, 200));
      assert.match(stop.json().error, TOO_BIG);
      const stopped = await h.request({ method: 'POST', url: '/api/v1/call/stop', key: c.key, body: call });
      assert.equal(stopped.statusCode, 200, stopped.body.slice(0, 200));
    });

    it("keeps each process's cache of records within HANDOFF_CACHE_BYTES, not only within its count", async () => {
      const c = await h.company();
      const big = 1024 * 1024 - 1000;
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) {
        const { id } = await createRecord(h, c, { metadata: oneKeyOf('a', big) });
        assert.equal((await finalizeRecord(h, c, id)).statusCode, 200);
        ids.push(id);
      }
      for (const id of ids) {
        const read = await readRecord(h, c, id);
        assert.equal(read.statusCode, 200);
        assert.equal(read.json().metadata.a.length, (oneKeyOf('a', big).a ?? '').length);
      }
      // Eight final records of nearly a MiB each were read; 10,000 may be cached by count, three fit the bytes.
      const cached = ids.filter((id) => h.services.handoffCache.get(`${c.id}:${id}`) !== undefined);
      assert.ok(cached.length >= 1 && cached.length <= 3, `cached: ${cached.length}`);
      assert.ok(cached.includes(ids[7] as string), 'the latest read is kept');
      // Small records still fill the cache by the thousand.
      const small: string[] = [];
      for (let i = 0; i < 50; i++) {
        const { id } = await createRecord(h, c, { metadata: { i } });
        assert.equal((await finalizeRecord(h, c, id)).statusCode, 200);
        assert.equal((await readRecord(h, c, id)).statusCode, 200);
        small.push(id);
      }
      assert.ok(small.every((id) => h.services.handoffCache.get(`${c.id}:${id}`) !== undefined));
    });
  });
}
