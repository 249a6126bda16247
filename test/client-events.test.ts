/** @cqs/client's events() (following and resuming the feed) and verifyWebhook (Standard Webhooks). */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { CqsClient, verifyWebhook, WebhookVerificationError } from '../packages/client/src/index.ts';
import { webhookHeaders } from '../src/domain/webhooks/signing.ts';
import { post } from './helpers/calls.ts';
import { settleEvents } from './helpers/events.ts';
import type { Harness } from './helpers/harness.ts';
import { startListening } from './helpers/listening.ts';
import { startReceiver } from './helpers/receiver.ts';

describe('verifyWebhook', () => {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const body = '{"id":"e1","type":"call.created","created_at":"2026-01-01T00:00:00.000Z","data":{}}';

  it("accepts the reference library's signatures and the specification's vector, old and new secret", async () => {
    const now = Math.floor(Date.now() / 1000);
    const signed = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(now),
      'webhook-signature': new Webhook(secret).sign('msg_1', new Date(now * 1000), body),
    };
    assert.equal((await verifyWebhook(body, signed, secret)).type, 'call.created');
    const vector = {
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    };
    await assert.doesNotReject(
      verifyWebhook('{"test": 2432232314}', vector, secret, { now: 1614265330_000 }) as Promise<unknown>,
    );
    const other = 'whsec_Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=';
    const both = webhookHeaders([other, secret], 'e1', now, body);
    await verifyWebhook(body, both, secret);
    await verifyWebhook(body, new Headers(both), other);
  });

  it('refuses a wrong signature, a changed body, a missing header and a stale timestamp', async () => {
    const now = Math.floor(Date.now() / 1000);
    const good = webhookHeaders([secret], 'e1', now, body);
    const wrong = 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
    await assert.rejects(verifyWebhook(body, good, wrong), WebhookVerificationError);
    await assert.rejects(verifyWebhook(`${body} `, good, secret), WebhookVerificationError);
    const { 'webhook-id': _id, ...noId } = good;
    await assert.rejects(verifyWebhook(body, noId, secret), /webhook-id/);
    const stale = webhookHeaders([secret], 'e1', now - 301, body);
    await assert.rejects(verifyWebhook(body, stale, secret), /too far/);
    await verifyWebhook(body, stale, secret, { toleranceSeconds: 600 });
  });

  it('finds the headers of a plain object whatever their case (an AWS Lambda event keeps the sender’s)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const good = webhookHeaders([secret], 'e1', now, body);
    const capitalized = {
      'Webhook-Id': good['webhook-id'],
      'WEBHOOK-TIMESTAMP': good['webhook-timestamp'],
      'Webhook-Signature': good['webhook-signature'],
    };
    assert.equal((await verifyWebhook(body, capitalized, secret)).type, 'call.created');
    const { 'Webhook-Id': _id, ...noId } = capitalized;
    await assert.rejects(verifyWebhook(body, noId, secret), /missing webhook-id/);
  });
});

describe('client events()', () => {
  let h: Harness;
  let baseUrl: string;
  before(async () => {
    ({ h, baseUrl } = await startListening('pglite'));
  });
  after(() => h.close());

  it('follows the feed and resumes from a saved cursor, seeing every event once', async () => {
    const c = await h.company();
    const key = (await c.addKey(c.admin.id, ['events:read'])).key;
    const client = new CqsClient({ baseUrl, apiKey: key });
    const create = (id: string) =>
      post(h, c, '/api/v1/call/create', {
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: id,
      });
    for (const id of ['a', 'b', 'c']) await create(id);
    await settleEvents(h);
    const seen: string[] = [];
    let saved: string | undefined;
    const stop = new AbortController();
    for await (const page of client.events({ limit: 2, pollIntervalMs: 50, signal: stop.signal })) {
      for (const event of page.events) seen.push(String(event.data.conversation_id));
      saved = page.next_cursor;
      if (seen.length >= 3) stop.abort();
    }
    assert.deepEqual(seen, ['a', 'b', 'c']);
    for (const id of ['d', 'e']) await create(id);
    const resumed: string[] = [];
    const stop2 = new AbortController();
    for await (const page of client.events({
      ...(saved ? { after: saved } : {}),
      pollIntervalMs: 50,
      signal: stop2.signal,
    })) {
      for (const event of page.events) resumed.push(String(event.data.conversation_id));
      if (resumed.length >= 2) stop2.abort();
    }
    assert.deepEqual(resumed, ['d', 'e']);
  });

  it('hands over the cursor a feed filtered by type moves past other types with', async () => {
    const c = await h.company();
    const key = (await c.addKey(c.admin.id, ['events:read'])).key;
    const client = new CqsClient({ baseUrl, apiKey: key });
    await post(h, c, '/api/v1/call/create', {
      agent_email: c.agent.email,
      product_id: c.productId,
      conversation_id: 'typed',
    });
    await settleEvents(h);
    const stop = new AbortController();
    // Empty pages were never handed over: the loop would have waited for ever.
    const timeout = setTimeout(() => stop.abort(), 5000);
    let saved: string | undefined;
    let created = 0;
    let tagged = false;
    for await (const page of client.events({
      types: ['call.created'],
      pollIntervalMs: 50,
      signal: stop.signal,
    })) {
      created += page.events.length;
      saved = page.next_cursor;
      if (!tagged && created === 1) {
        // Events of another type after the one followed: the cursor moves past them.
        tagged = true;
        const res = await post(h, c, '/api/v1/call/add_tags', {
          agent_email: c.agent.email,
          conversation_id: 'typed',
          tags: [{ key: 'k', type: 'string', value: 'v' }],
        });
        assert.equal(res.statusCode, 200, res.body);
        await settleEvents(h);
        continue;
      }
      if (tagged && page.events.length === 0) stop.abort();
    }
    clearTimeout(timeout);
    // The saved cursor is past the tag's event: the feed after it, unfiltered, is empty.
    const rest = await client.getEvents({ ...(saved ? { after: saved } : {}) });
    assert.deepEqual(
      rest.events.map((e) => e.type),
      [],
    );
  });
});

describe('cqs events tail and cqs webhooks', () => {
  let h: Harness;
  let baseUrl: string;
  before(async () => {
    ({ h, baseUrl } = await startListening('pglite', { WEBHOOK_ALLOW_PRIVATE: 'true' }));
  });
  after(() => h.close());

  const MAIN = new URL('../src/cli/main.ts', import.meta.url).pathname;

  /** Runs the CLI until it exits, or until `until` holds over its stdout and stderr (then it is stopped). */
  function cqs(args: string[], env: Record<string, string>, until?: (out: string, err: string) => boolean) {
    return new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, ...env } });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (until?.(out, err)) child.kill('SIGINT');
      });
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        if (until?.(out, err)) child.kill('SIGINT');
      });
      // A CLI that never gets where `until` waits is stopped, so that the test fails instead of hanging.
      const limit = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.on('close', (code) => {
        clearTimeout(limit);
        resolve({ code, out, err });
      });
    });
  }

  it('creates, lists and tests an endpoint, shows its deliveries, and tails the feed by type', async () => {
    const c = await h.company();
    const key = (await c.addKey(c.admin.id, ['webhooks', 'events:read'])).key;
    const env = { CQS_URL: baseUrl, CQS_API_KEY: key };
    const r = await startReceiver();
    try {
      const created = await cqs(['webhooks', 'create', r.url, '--type', 'call.created', '--json'], env);
      assert.equal(created.code, 0, created.err);
      const endpoint = JSON.parse(created.out);
      assert.match(endpoint.secret, /^whsec_/);
      const list = await cqs(['webhooks', 'list'], env);
      assert.match(list.out, new RegExp(`${endpoint.id}\\tenabled\\tcall.created\\t`));
      assert.equal((await cqs(['webhooks', 'test', endpoint.id], env)).code, 0);
      await r.waitFor((got) => got.length >= 1);
      await verifyWebhook(
        r.received[0]?.body ?? '',
        r.received[0]?.headers as Record<string, string>,
        endpoint.secret,
      );
      for (;;) {
        const log = await cqs(['webhooks', 'deliveries', endpoint.id], env);
        if (/webhook\.test\tdelivered\t1\t200/.test(log.out)) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await post(h, c, '/api/v1/call/create', {
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: 'x',
      });
      await post(h, c, '/api/v1/call/start', { agent_email: c.agent.email, conversation_id: 'x' });
      const tail = await cqs(['events', 'tail', '--type', 'call.started'], env, (out) => out.includes('\n'));
      const [line] = tail.out.trim().split('\n');
      assert.equal(JSON.parse(line ?? '{}').type, 'call.started');
      assert.match(tail.err, /cursor \S+/);
    } finally {
      await r.close();
    }
  });

  it('says on stderr why the feed is silent while the service cannot be reached, and keeps trying', async () => {
    // A port nothing listens on: a server opened and closed again.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const env = { CQS_URL: `http://127.0.0.1:${port}`, CQS_API_KEY: 'cqs_unused' };
    const tail = await cqs(['events', 'tail'], env, (_out, err) => /retry 2 in/.test(err));
    assert.match(tail.err, /fetch failed \(.*ECONNREFUSED.*\); retry 1 in \d+\.\d s\n/);
    assert.equal(tail.out, '');
  });
});
