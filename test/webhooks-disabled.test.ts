/**
 * "A disabled endpoint gets nothing" (decision 27) at the sender: a delivery put back to pending on a
 * disabled endpoint (a redeliver) reaches the delivery job, whose claim reads the endpoint with the
 * deliveries (src/adapters/db/repositories/webhook-deliveries.ts) and, finding it disabled, sends nothing
 * and marks it failed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCall } from './helpers/calls.ts';
import { addWebhookEndpoint } from './helpers/events.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { pollUntil } from './helpers/poll.ts';
import { type Receiver, startReceiver } from './helpers/receiver.ts';

for (const backend of BACKENDS) {
  describe(`webhook sender and a disabled endpoint (${backend})`, () => {
    let h: Harness;
    let r: Receiver | undefined;
    before(async () => {
      h = await startHarness(
        backend,
        { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_INTERVAL: '100', WORKER_POLL_INTERVAL: '50' },
        { worker: true },
      );
    });
    after(async () => {
      await r?.close();
      await h.close();
    });

    it('sends nothing to it, even a delivery redelivered after it was disabled, and marks that failed', async () => {
      const c = await h.company();
      const receiver = await startReceiver();
      r = receiver;
      const { id: endpointId, key } = await addWebhookEndpoint(h, c, {
        url: receiver.url,
        types: ['call.created'],
      });
      await createCall(h, c, 'disabled-0');
      await receiver.waitFor((got) => got.length >= 1, 15_000);
      const deliveriesOf = async () =>
        (await h.request({ method: 'GET', url: `/api/v1/webhooks/${endpointId}/deliveries`, key })).json()
          .deliveries as { id: string; status: string }[];
      /** Polls the endpoint's newest delivery until it has `status`, for at most 15 s. */
      const untilStatus = async (status: string) =>
        (
          await pollUntil(deliveriesOf, ([newest]) => newest?.status === status, {
            timeoutMs: 15_000,
            what: ([newest]) => `the delivery is ${newest?.status}, not ${status}`,
          })
        )[0] as { id: string; status: string };
      // The receiver has the request before the sender has recorded its answer.
      const delivery = await untilStatus('delivered');
      const patched = await h.request({
        method: 'PATCH',
        url: `/api/v1/webhooks/${endpointId}`,
        key,
        body: { enabled: false },
      });
      assert.equal(patched.statusCode, 200, patched.body);
      const redelivered = await h.request({
        method: 'POST',
        url: `/api/v1/webhooks/${endpointId}/deliveries/${delivery.id}/redeliver`,
        key,
      });
      assert.equal(redelivered.statusCode, 202, redelivered.body);
      await untilStatus('failed');
      assert.equal(receiver.received.length, 1, 'the disabled endpoint got nothing more');
    });
  });
}
