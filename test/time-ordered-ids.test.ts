/**
 * The ids of calls, handoff records, events and webhook deliveries are UUIDs of version 7 (migration 0021):
 * the time of their making in the first 48 bits, so new rows land at one end of the indexes that hold them,
 * and ids made later sort after ids made earlier (in a later millisecond).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { addWebhookEndpoint, settleEvents } from './helpers/events.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { makeCall, readKeys } from './helpers/reads.ts';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The Unix time in milliseconds a version 7 UUID carries. */
function millisOf(id: string): number {
  return Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);
}

/** Asserts `ids` are version 7, made between `from` and `to` (ms), in the order given. */
function assertTimeOrdered(ids: string[], from: number, to: number): void {
  for (const id of ids) {
    assert.match(id, V7);
    // The database's clock and this process's are the same machine's; 1 s covers rounding and scheduling.
    assert.ok(millisOf(id) >= from - 1000 && millisOf(id) <= to + 1000, `${id} made outside the test`);
  }
  assert.deepEqual([...ids].sort(), ids);
}

for (const backend of BACKENDS) {
  describe(`time-ordered ids (${backend})`, () => {
    let h: Harness;
    before(async () => {
      // Loopback endpoints for the deliveries; nothing is sent (no worker).
      h = await startHarness(backend, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    });
    after(() => h.close());

    it('gives calls, handoff records, events and deliveries ids that sort by when they were made', async () => {
      const c = await h.company();
      const keys = await readKeys(c);
      const from = Date.now();
      const calls: string[] = [];
      const handoffs: string[] = [];
      for (let i = 0; i < 3; i++) {
        calls.push((await makeCall(h, c, keys, { conversationId: `ordered-${i}` })).id);
        const res = await h.request({ method: 'POST', url: '/api/v1/call-handoff', key: c.writerKey });
        assert.equal(res.statusCode, 201, res.body);
        handoffs.push(res.json().handoff_id);
        // Ids of one millisecond are in random order among themselves.
        await sleep(3);
      }
      const to = Date.now();
      assertTimeOrdered(calls, from, to);
      assertTimeOrdered(handoffs, from, to);

      await settleEvents(h);
      const eventsKey = (await c.addKey(c.admin.id, ['events:read'])).key;
      const feed = await h.request({ method: 'GET', url: '/api/v1/events?limit=100', key: eventsKey });
      assert.equal(feed.statusCode, 200, feed.body);
      const created = (feed.json().events as { id: string; type: string }[]).filter(
        (e) => e.type === 'call.created',
      );
      assert.equal(created.length, 3);
      assertTimeOrdered(
        created.map((e) => e.id),
        from,
        to,
      );

      const endpoint = await addWebhookEndpoint(h, c, { url: 'http://127.0.0.1:9/hook' });
      const webhooksKey = endpoint.key;
      const url = `/api/v1/webhooks/${endpoint.id}`;
      const sentFrom = Date.now();
      for (let i = 0; i < 2; i++) {
        const sent = await h.request({ method: 'POST', url: `${url}/test`, key: webhooksKey });
        assert.equal(sent.statusCode, 202, sent.body);
        await sleep(3);
      }
      const log = await h.request({ method: 'GET', url: `${url}/deliveries`, key: webhooksKey });
      assert.equal(log.statusCode, 200, log.body);
      // The log lists the newest first.
      const deliveries = (log.json().deliveries as { id: string }[]).map((d) => d.id).reverse();
      assert.equal(deliveries.length, 2);
      assertTimeOrdered(deliveries, sentFrom, Date.now());
    });
  });
}
