/**
 * A webhook receiver that never answers is abandoned after WEBHOOK_TIMEOUT (here 1 s; 15 s by default):
 * the attempt is logged as failed with no status code, and the delivery is retried with the same webhook-id.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { post } from './helpers/calls.ts';
import { addWebhookEndpoint } from './helpers/events.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { pollUntil } from './helpers/poll.ts';
import { type Receiver, startReceiver } from './helpers/receiver.ts';

interface Delivery {
  event_id: string;
  status: string;
  attempts: { status_code: number | null; error: string | null; duration_ms: number }[];
}

for (const backend of BACKENDS) {
  describe(`webhook time limit (${backend})`, () => {
    let h: Harness;
    let receiver: Receiver;
    before(async () => {
      h = await startHarness(
        backend,
        {
          WEBHOOK_ALLOW_PRIVATE: 'true',
          WEBHOOK_TIMEOUT: '1',
          WEBHOOK_RETRY_SCHEDULE: '0.2,0.2',
          WEBHOOK_POLL_INTERVAL: '100',
          WORKER_POLL_INTERVAL: '50',
        },
        { worker: true },
      );
      receiver = await startReceiver();
    });
    after(async () => {
      await receiver.close();
      await h.close();
    });

    it('abandons a receiver that never answers, records the attempt as failed and retries it', async () => {
      const c = await h.company();
      // The first request is held for ever (its socket is closed only when the test ends); then 200.
      receiver.answer = (_request, response, index) => {
        if (index > 0) response.writeHead(200).end();
      };
      const { id: endpointId, key } = await addWebhookEndpoint(h, c, {
        url: receiver.url,
        types: ['call.created'],
      });
      const call = await post(h, c, '/api/v1/call/create', {
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: 'silent-1',
      });
      assert.equal(call.statusCode, 200, call.body);
      await receiver.waitFor((got) => got.length >= 2);
      const [first, second] = receiver.received;
      assert.equal(second?.headers['webhook-id'], first?.headers['webhook-id'], 'the same webhook-id');
      const delivery = (await pollUntil(
        async () => {
          const res = await h.request({
            method: 'GET',
            url: `/api/v1/webhooks/${endpointId}/deliveries`,
            key,
          });
          return (res.json().deliveries as Delivery[])[0];
        },
        (newest) => newest?.status === 'delivered',
        { what: (newest) => `not delivered: ${JSON.stringify(newest)}` },
      )) as Delivery;
      const [abandoned, retried] = delivery.attempts;
      assert.equal(abandoned?.status_code, null);
      assert.match(String(abandoned?.error), /no answer within 1000 ms/);
      assert.ok(
        (abandoned?.duration_ms ?? 0) >= 900,
        `waited about the time limit: ${abandoned?.duration_ms} ms`,
      );
      assert.equal(retried?.status_code, 200);
      assert.equal(delivery.attempts.length, 2);
    });
  });
}
