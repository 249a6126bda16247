/**
 * An operator's TRUNCATE behind the service (migration 0025) reaches the caches as deletes do: TRUNCATE
 * fires no row trigger and no UPDATE or DELETE one, so before it a removed grant stayed in the product
 * lists for up to 60 s, a truncated final handoff record was served until evicted, and a long poll of a
 * truncated record waited out its deadline.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { within } from './helpers/eventually.ts';
import { createRecord, finalizeRecord, readRecord } from './helpers/handoffs.ts';
import { BACKENDS, type Harness, runBehindTheService, startHarness } from './helpers/harness.ts';

for (const backend of BACKENDS) {
  // Its own database: the TRUNCATEs empty whole tables.
  describe(`TRUNCATE behind the service (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    it('drops a truncated grant from the cached product list within 1 s', async () => {
      const c = await h.company();
      const agent = await c.addKey(c.agent.id, ['calls']); // the agent's product is granted to it
      const listed = async () =>
        (
          (await h.request({ method: 'GET', url: '/api/v1/product/list', key: agent.key })).json() as {
            products: unknown[];
          }
        ).products.length;
      // The setup's own notices may still empty the cache: ask until the list stays in it.
      await within(2000, 'the agent sees the granted product from memory', async () => {
        if ((await listed()) !== 1) return false;
        const principal = h.services.principalCache.peek(agent.key);
        return principal !== undefined && h.services.principalCache.peekProducts(principal) !== undefined;
      });
      await runBehindTheService(h, 'truncate product_grants');
      await within(1000, 'the agent no longer sees it', async () => (await listed()) === 0);
    });

    it('stops serving truncated final handoff records within 1 s', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c, { metadata: { n: 1 } });
      assert.equal((await finalizeRecord(h, c, id)).statusCode, 200);
      await within(
        2000,
        'the final record is cached',
        async () =>
          (await readRecord(h, c, id)).statusCode === 200 &&
          h.services.handoffCache.get(`${c.id}:${id}`) !== undefined,
      );
      await runBehindTheService(h, 'truncate call_handoffs');
      await within(1000, 'the record is gone', async () => (await readRecord(h, c, id)).statusCode === 404);
    });

    it('answers a long poll of a truncated record at once, not at its deadline', async () => {
      const c = await h.company();
      const { id, etag } = await createRecord(h, c, { metadata: { n: 1 } });
      const started = performance.now();
      const waiting = readRecord(h, c, id, { wait: 30, etag });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await runBehindTheService(h, 'truncate call_handoffs');
      const res = await waiting;
      const seconds = (performance.now() - started) / 1000;
      assert.equal(res.statusCode, 404, res.body);
      // Its deadline is 30 s away; heard, the answer comes within a second or two on a loaded machine.
      assert.ok(seconds < 10, `answered after ${seconds.toFixed(1)} s`);
    });
  });
}
