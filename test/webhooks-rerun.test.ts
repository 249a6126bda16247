/**
 * A delivery job that ends after a short batch (src/domain/webhooks/delivery.ts) leaves the deliveries
 * fanned out while it was sending to its rerun (`rerunIfRunning`), not to the poll for due deliveries: with
 * the poll a minute apart, they still arrive as soon as the job's send is answered.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCall } from './helpers/calls.ts';
import { addWebhookEndpoint } from './helpers/events.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { pollUntil } from './helpers/poll.ts';
import { type Receiver, startReceiver } from './helpers/receiver.ts';

for (const backend of BACKENDS) {
  describe(`webhook delivery job reruns (${backend})`, () => {
    let h: Harness;
    let r: Receiver | undefined;
    before(async () => {
      h = await startHarness(
        backend,
        {
          WEBHOOK_ALLOW_PRIVATE: 'true',
          WEBHOOK_TIMEOUT: '20',
          // Neither the due-delivery poll nor the worker's own poll comes round during the test.
          WEBHOOK_POLL_INTERVAL: '60000',
          WORKER_POLL_INTERVAL: '60000',
        },
        { worker: true },
      );
    });
    after(async () => {
      await r?.close();
      await h.close();
    });

    it('sends what was fanned out during a send right after it, without waiting for the poll', async () => {
      const c = await h.company();
      const receiver = await startReceiver();
      r = receiver;
      let releaseFirst: () => void = () => {};
      receiver.answer = (_req, res, index) => {
        if (index === 0) releaseFirst = () => res.writeHead(204).end();
        else res.writeHead(204).end();
      };
      const { id: endpointId, key } = await addWebhookEndpoint(h, c, {
        url: receiver.url,
        types: ['call.created'],
      });
      await createCall(h, c, 'rerun-0');
      // The job claimed a batch of one and is waiting for its answer.
      await receiver.waitFor((got) => got.length >= 1, 15_000);
      for (let i = 1; i <= 3; i++) await createCall(h, c, `rerun-${i}`);
      await pollUntil(
        async () =>
          (await h.request({ method: 'GET', url: `/api/v1/webhooks/${endpointId}/deliveries`, key })).json(),
        (page: { deliveries: unknown[] }) => page.deliveries.length >= 4,
        { timeoutMs: 15_000, what: () => 'the three later events were fanned out' },
      );
      assert.equal(receiver.received.length, 1, 'nothing else was sent while the first send was held');
      const released = Date.now();
      releaseFirst();
      await receiver.waitFor((got) => got.length >= 4, 10_000);
      assert.ok(Date.now() - released < 10_000, `the last came ${Date.now() - released} ms after`);
      assert.equal(new Set(receiver.received.map((got) => got.headers['webhook-id'])).size, 4);
    });
  });
}
