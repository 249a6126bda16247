/**
 * Webhooks (decision 27): endpoint management, Standard Webhooks signatures (against the specification's
 * reference vector and its reference library), delivery through the queue with retries, per-endpoint
 * concurrency, no redirects, short excerpts, rotation, test messages, redelivery, auto-disable, SSRF rules.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { and, eq, sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { webhookEndpoints } from '../src/adapters/db/schema.ts';
import { sendWebhook } from '../src/adapters/http/webhook-sender.ts';
import { checkWebhookUrl } from '../src/domain/webhooks/endpoints.ts';
import { signWebhook, webhookHeaders } from '../src/domain/webhooks/signing.ts';
import { createCall, post } from './helpers/calls.ts';
import { settleEvents } from './helpers/events.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { pollUntil } from './helpers/poll.ts';
import { type Receiver, startReceiver } from './helpers/receiver.ts';

describe('webhook signatures', () => {
  it('match the reference vector of the Standard Webhooks specification', () => {
    // libraries/javascript/src/webhook.test.ts of standard-webhooks/standard-webhooks ("sign function works").
    const signature = signWebhook(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    assert.equal(signature, 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('verify with the reference library, with both secrets during a rotation', () => {
    const secrets = [
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'whsec_Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=',
    ];
    const body = '{"id":"e1","type":"call.created"}';
    const headers = webhookHeaders(secrets, 'e1', Math.floor(Date.now() / 1000), body);
    for (const secret of secrets)
      assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    assert.throws(() =>
      new Webhook('whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=').verify(body, headers),
    );
  });
});

describe('webhook URL rule', () => {
  it('wants https and a public address unless private addresses are allowed; other schemes never', async () => {
    for (const url of [
      'http://example.com/hook',
      'https://127.0.0.1/hook',
      'https://10.1.2.3/hook',
      'https://192.168.0.1/hook',
      'https://169.254.169.254/latest',
      'https://[::1]/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://[::7f00:1]/hook',
      'https://[::a9fe:a9fe]/latest',
      'https://localhost/hook',
      'ftp://example.com/hook',
      'not a url',
    ]) {
      await assert.rejects(checkWebhookUrl(url, false), /url/, url);
    }
    // What a developer with a receiver on their own machine needs to know; another scheme is never taken.
    for (const url of ['http://example.com/hook', 'https://127.0.0.1/hook']) {
      await assert.rejects(
        checkWebhookUrl(url, false),
        /only when the service runs with WEBHOOK_ALLOW_PRIVATE=true/,
      );
    }
    await assert.rejects(checkWebhookUrl('ftp://example.com/hook', false), {
      message: 'url: must be an https URL',
    });
    await checkWebhookUrl('https://93.184.215.14/hook', false);
    await checkWebhookUrl('https://[::5db8:d70e]/hook', false); // 93.184.215.14, IPv4-compatible
    await checkWebhookUrl('https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hook', false);
    await checkWebhookUrl('http://127.0.0.1:9/hook', true);
    await assert.rejects(checkWebhookUrl('ftp://127.0.0.1/hook', true), /url/);
    await assert.rejects(checkWebhookUrl('file:///etc/passwd', true), /url/);
  });

  it('checks the resolved address when connecting, not only the name', async () => {
    const receiver = await startReceiver();
    try {
      const byName = receiver.url.replace('127.0.0.1', 'localhost');
      const refused = await sendWebhook(byName, {}, '{}', { timeoutMs: 5000, allowPrivate: false });
      assert.equal(refused.statusCode, null);
      assert.match(String(refused.error), /not a public address/);
      const literal = await sendWebhook(receiver.url, {}, '{}', { timeoutMs: 5000, allowPrivate: false });
      assert.match(String(literal.error), /not a public address/);
      assert.equal(receiver.received.length, 0, 'nothing reached the private address');
      const allowed = await sendWebhook(byName, {}, '{}', { timeoutMs: 5000, allowPrivate: true });
      assert.equal(allowed.statusCode, 200);
    } finally {
      await receiver.close();
    }
  });
});

for (const backend of BACKENDS) {
  describe(`webhooks (${backend})`, () => {
    let h: Harness;
    const receivers: Receiver[] = [];
    before(async () => {
      h = await startHarness(
        backend,
        {
          WEBHOOK_ALLOW_PRIVATE: 'true',
          WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2',
          WEBHOOK_TIMEOUT: '10',
          WEBHOOK_POLL_INTERVAL: '100',
          WORKER_POLL_INTERVAL: '50',
        },
        { worker: true },
      );
    });
    after(async () => {
      for (const r of receivers) await r.close();
      await h.close();
    });

    async function receiver() {
      const r = await startReceiver();
      receivers.push(r);
      return r;
    }

    async function keyOf(c: TestCompany) {
      return (await c.addKey(c.admin.id, ['webhooks', 'events:read'])).key;
    }

    async function createEndpoint(key: string, body: Record<string, unknown>) {
      const res = await h.request({ method: 'POST', url: '/api/v1/webhooks', key, body });
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as { id: string; secret: string; types: string[] | null };
    }

    async function deliveries(key: string, id: string) {
      const res = await h.request({ method: 'GET', url: `/api/v1/webhooks/${id}/deliveries`, key });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().deliveries as {
        id: string;
        event_id: string;
        event_type: string;
        status: string;
        attempts: { status_code: number | null; error: string | null; response: string | null }[];
      }[];
    }

    async function waitForDeliveries(
      key: string,
      id: string,
      predicate: (list: Awaited<ReturnType<typeof deliveries>>) => boolean,
    ) {
      return pollUntil(() => deliveries(key, id), predicate, {
        what: (list) => `deliveries: ${JSON.stringify(list)}`,
      });
    }

    it('manages endpoints: create with a whsec_ secret, list, show, change, delete; admins with the scope only', async () => {
      const c = await h.company();
      const key = await keyOf(c);
      const created = await createEndpoint(key, {
        url: 'http://127.0.0.1:9/hook',
        types: ['call.stopped'],
        description: 'QA',
      });
      assert.match(created.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.equal(Buffer.from(created.secret.slice(6), 'base64').length, 32);
      const list = (await h.request({ method: 'GET', url: '/api/v1/webhooks', key })).json();
      assert.deepEqual(
        list.webhooks.map((w: { id: string }) => w.id),
        [created.id],
      );
      assert.ok(!('secret' in list.webhooks[0]), 'the secret is shown only on create and rotation');
      const patched = await h.request({
        method: 'PATCH',
        url: `/api/v1/webhooks/${created.id}`,
        key,
        body: { types: null, enabled: false },
      });
      assert.equal(patched.statusCode, 200, patched.body);
      assert.equal(patched.json().types, null);
      assert.equal(patched.json().enabled, false);
      const shown = await h.request({ method: 'GET', url: `/api/v1/webhooks/${created.id}`, key });
      assert.equal(shown.json().description, 'QA');
      for (const body of [
        { url: 'ftp://x/y' },
        { types: ['call.exploded'] },
        { url: 'http://127.0.0.1/', x: 1 },
      ]) {
        const res = await h.request({ method: 'POST', url: '/api/v1/webhooks', key, body });
        assert.equal(res.statusCode, 422, `${JSON.stringify(body)}: ${res.body}`);
      }
      const other = await h.company();
      const otherKey = await keyOf(other);
      const foreign = await h.request({
        method: 'GET',
        url: `/api/v1/webhooks/${created.id}`,
        key: otherKey,
      });
      assert.equal(foreign.statusCode, 404);
      const agentKey = (await c.addKey(c.agent.id, ['webhooks'])).key;
      assert.equal(
        (await h.request({ method: 'GET', url: '/api/v1/webhooks', key: agentKey })).statusCode,
        403,
      );
      assert.equal((await h.request({ method: 'GET', url: '/api/v1/webhooks', key: c.key })).statusCode, 403);
      const deleted = await h.request({ method: 'DELETE', url: `/api/v1/webhooks/${created.id}`, key });
      assert.equal(deleted.statusCode, 204);
      assert.equal(
        (await h.request({ method: 'DELETE', url: `/api/v1/webhooks/${created.id}`, key })).statusCode,
        404,
      );
    });

    it('delivers every event of its types, signed, with the event id as webhook-id and the event as body', async () => {
      const c = await h.company();
      const key = await keyOf(c);
      const all = await receiver();
      const stops = await receiver();
      const everything = await createEndpoint(key, { url: all.url });
      await createEndpoint(key, { url: stops.url, types: ['call.stopped'] });
      await createCall(h, c, 'w-1');
      await post(h, c, '/api/v1/call/start', { agent_email: c.agent.email, conversation_id: 'w-1' });
      await post(h, c, '/api/v1/call/stop', { agent_email: c.agent.email, conversation_id: 'w-1' });
      await all.waitFor((r) => r.length >= 3);
      await stops.waitFor((r) => r.length >= 1);
      assert.deepEqual(all.received.map((r) => r.json.type).sort(), [
        'call.created',
        'call.started',
        'call.stopped',
      ]);
      assert.deepEqual(
        stops.received.map((r) => r.json.type),
        ['call.stopped'],
      );
      await settleEvents(h);
      const feed = (await h.request({ method: 'GET', url: '/api/v1/events', key })).json();
      for (const got of all.received) {
        const event = feed.events.find((e: { id: string }) => e.id === got.json.id);
        assert.deepEqual(got.json, event, 'the body is the event object');
        assert.equal(got.headers['webhook-id'], event.id);
        assert.equal(got.headers['content-type'], 'application/json');
        const headers = got.headers as Record<string, string>;
        assert.deepEqual(new Webhook(everything.secret).verify(got.body, headers), event);
      }
      const log = await waitForDeliveries(key, everything.id, (l) =>
        l.every((d) => d.status === 'delivered'),
      );
      assert.equal(log.length, 3);
      assert.equal(log[0]?.attempts[0]?.status_code, 200);
    });

    it('retries a failed delivery with the same webhook-id, keeps only an excerpt, and follows no redirect', async () => {
      const c = await h.company();
      const key = await keyOf(c);
      const flaky = await receiver();
      const target = await receiver();
      flaky.answer = (_req, res, i) => {
        if (i === 0) res.writeHead(500).end('x'.repeat(10_000));
        else if (i === 1) res.writeHead(302, { location: target.url }).end();
        else res.writeHead(204).end();
      };
      const endpoint = await createEndpoint(key, { url: flaky.url });
      await createCall(h, c, 'r-1');
      await flaky.waitFor((r) => r.length >= 3);
      assert.equal(new Set(flaky.received.map((r) => r.headers['webhook-id'])).size, 1, 'one webhook-id');
      assert.equal(target.received.length, 0, 'the redirect was not followed');
      const [delivery] = await waitForDeliveries(key, endpoint.id, (l) => l[0]?.status === 'delivered');
      assert.deepEqual(
        delivery?.attempts.map((a) => a.status_code),
        [500, 302, 204],
      );
      assert.equal(delivery?.attempts[0]?.response?.length, 500);
      assert.match(String(delivery?.attempts[1]?.error), /redirect/);
      assert.equal(delivery?.attempts[2]?.error, null);
    });

    it('marks a delivery failed after the last retry of the schedule', async () => {
      const c = await h.company();
      const key = await keyOf(c);
      const down = await receiver();
      down.answer = (_req, res) => {
        res.writeHead(503).end('down');
      };
      const endpoint = await createEndpoint(key, { url: down.url });
      await createCall(h, c, 'f-1');
      const [delivery] = await waitForDeliveries(key, endpoint.id, (l) => l[0]?.status === 'failed');
      assert.equal(delivery?.attempts.length, 4, 'the first attempt and three retries');
    });

    it('one slow endpoint does not delay another', async () => {
      const c = await h.company();
      const key = await keyOf(c);
      const slow = await receiver();
      const fast = await receiver();
      const held: (() => void)[] = [];
      slow.answer = (_req, res) => {
        held.push(() => res.writeHead(200).end());
      };
      await createEndpoint(key, { url: slow.url });
      await createEndpoint(key, { url: fast.url });
      for (let i = 0; i < 5; i++) await createCall(h, c, `s-${i}`);
      await fast.waitFor((r) => r.length >= 5);
      assert.equal(
        slow.received.length,
        1,
        'the slow endpoint holds one delivery at a time, and only its own',
      );
      for (const release of held.splice(0)) release();
      await slow.waitFor((r) => {
        for (const release of held.splice(0)) release();
        return r.length >= 5;
      });
    });

    it('a batch that runs out of its window gives the rest back: the next batch sends them at once', async () => {
      const c = await h.company();
      const key = await keyOf(c);
      const r = await receiver();
      let releaseFirst: () => void = () => {};
      r.answer = (_req, res, index) => {
        if (index === 0) releaseFirst = () => res.writeHead(200).end();
        else setTimeout(() => res.writeHead(200).end(), 600);
      };
      const endpoint = await createEndpoint(key, { url: r.url, types: ['call.created'] });
      await createCall(h, c, 'w-0');
      await r.waitFor((got) => got.length >= 1);
      for (let i = 1; i <= 3; i++) await createCall(h, c, `w-${i}`);
      await waitForDeliveries(key, endpoint.id, (l) => l.length >= 4);
      const released = Date.now();
      releaseFirst();
      // Two 600 ms answers fill a batch's 1 s window; the third must not wait for its claim to end (≥ 11 s).
      await r.waitFor((got) => got.length >= 4);
      assert.ok(Date.now() - released < 8000, `the last delivery came ${Date.now() - released} ms after`);
      assert.equal(new Set(r.received.map((got) => got.headers['webhook-id'])).size, 4, 'each sent once');
    });

    it('test sends webhook.test whatever the types and logs no event; redeliver resends the same id', async () => {
      const c = await h.company();
      const key = await keyOf(c);
      const r = await receiver();
      const endpoint = await createEndpoint(key, { url: r.url, types: ['handoff.finalized'] });
      const res = await h.request({ method: 'POST', url: `/api/v1/webhooks/${endpoint.id}/test`, key });
      assert.equal(res.statusCode, 202, res.body);
      await r.waitFor((got) => got.length >= 1);
      assert.equal(r.received[0]?.json.type, 'webhook.test');
      assert.equal(r.received[0]?.headers['webhook-id'], res.json().event_id);
      await settleEvents(h);
      const feed = (await h.request({ method: 'GET', url: '/api/v1/events', key })).json();
      assert.deepEqual(feed.events, [], 'webhook.test is not written to the event log');
      const [delivery] = await waitForDeliveries(key, endpoint.id, (l) => l[0]?.status === 'delivered');
      const again = await h.request({
        method: 'POST',
        url: `/api/v1/webhooks/${endpoint.id}/deliveries/${delivery?.id}/redeliver`,
        key,
      });
      assert.equal(again.statusCode, 202, again.body);
      await r.waitFor((got) => got.length >= 2);
      assert.equal(r.received[1]?.headers['webhook-id'], r.received[0]?.headers['webhook-id']);
      assert.equal(r.received[1]?.body, r.received[0]?.body);
    });

    it('signs with both secrets for a day after a rotation', async () => {
      const c = await h.company();
      const key = await keyOf(c);
      const r = await receiver();
      const endpoint = await createEndpoint(key, { url: r.url });
      const rotated = await h.request({
        method: 'POST',
        url: `/api/v1/webhooks/${endpoint.id}/rotate-secret`,
        key,
      });
      assert.equal(rotated.statusCode, 200, rotated.body);
      const { secret } = rotated.json();
      assert.notEqual(secret, endpoint.secret);
      await createCall(h, c, 'rot-1');
      await r.waitFor((got) => got.length >= 1);
      const got = r.received[0];
      assert.equal(String(got?.headers['webhook-signature']).split(' ').length, 2);
      for (const s of [secret, endpoint.secret]) {
        new Webhook(s).verify(got?.body ?? '', got?.headers as Record<string, string>);
      }
    });

    it('disables an endpoint whose deliveries have all failed for 5 days, with an event and a log line', async () => {
      const c = await h.company();
      const key = await keyOf(c);
      const down = await receiver();
      down.answer = (_req, res) => {
        res.writeHead(500).end();
      };
      const endpoint = await createEndpoint(key, { url: down.url, types: ['call.created'] });
      await h.services.database.db
        .update(webhookEndpoints)
        .set({ failingSince: sql`now() - interval '5 days 1 minute'` })
        .where(and(eq(webhookEndpoints.companyId, c.id), eq(webhookEndpoints.id, endpoint.id)));
      await createCall(h, c, 'd-1');
      await pollUntil(
        async () => (await h.request({ method: 'GET', url: `/api/v1/webhooks/${endpoint.id}`, key })).json(),
        (shown) => shown.enabled === false,
        { what: () => 'the endpoint was not disabled' },
      );
      await settleEvents(h);
      const feed = (
        await h.request({ method: 'GET', url: '/api/v1/events?type=webhook.disabled', key })
      ).json();
      assert.equal(feed.events.length, 1);
      assert.equal(feed.events[0].data.webhook_id, endpoint.id);
      assert.match(h.logs(), /webhook endpoint disabled/);
      await createCall(h, c, 'd-2');
      await settleEvents(h);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(down.received.length, 1, 'a disabled endpoint gets nothing');
    });
  });
}
