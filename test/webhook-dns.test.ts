/**
 * Webhook host names are looked up with c-ares (not getaddrinfo on libuv's four threads, which file reads
 * and writes share: slow name servers of one company's webhook host stalled every company's uploads), from
 * WEBHOOK_DNS_SERVERS when set, with a time limit of their own: on create, on change and when connecting.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sendWebhook } from '../src/adapters/http/webhook-sender.ts';
import { loadConfig } from '../src/config/config.ts';
import { type DnsAnswer, startDnsServer } from './helpers/dns-server.ts';
import { type Harness, startHarness } from './helpers/harness.ts';
import { startReceiver } from './helpers/receiver.ts';

const NAMES: Record<string, DnsAnswer> = {
  'hooks.public.test': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'hooks.mixed.test': ['93.184.215.14', '10.0.0.5'],
  'hooks.loopback.test': ['127.0.0.1'],
  'hooks.silent.test': 'silent',
};

describe('webhook host names and the name servers of WEBHOOK_DNS_SERVERS', () => {
  let dns: Awaited<ReturnType<typeof startDnsServer>>;
  let h: Harness;
  before(async () => {
    dns = await startDnsServer(NAMES);
    h = await startHarness('pglite', { WEBHOOK_DNS_SERVERS: dns.address });
  });
  after(async () => {
    await h.close();
    await dns.close();
  });

  async function create(key: string, url: string) {
    return h.request({ method: 'POST', url: '/api/v1/webhooks', key, body: { url } });
  }

  it('are asked of those name servers on create and on change, every address judged', async () => {
    const c = await h.company();
    const { key } = await c.addKey(c.admin.id, ['webhooks']);
    const made = await create(key, 'https://hooks.public.test/h');
    assert.equal(made.statusCode, 201, made.body);
    assert.ok(
      (dns.queries.get('hooks.public.test') ?? 0) >= 2,
      'A and AAAA were asked of the configured server',
    );
    const mixed = await create(key, 'https://hooks.mixed.test/h');
    assert.equal(mixed.statusCode, 422);
    assert.match(mixed.body, /resolves to 10\.0\.0\.5, which is not a public address/);
    const missing = await create(key, 'https://hooks.nowhere.test/h');
    assert.equal(missing.statusCode, 422);
    assert.match(missing.body, /hooks\.nowhere\.test does not resolve/);
    const changed = await h.request({
      method: 'PATCH',
      url: `/api/v1/webhooks/${(made.json() as { id: string }).id}`,
      key,
      body: { url: 'https://hooks.loopback.test/h' },
    });
    assert.equal(changed.statusCode, 422);
    assert.match(changed.body, /resolves to 127\.0\.0\.1/);
  });

  it('answer a create within their time limit when the name servers say nothing', async () => {
    const c = await h.company();
    const { key } = await c.addKey(c.admin.id, ['webhooks']);
    const started = performance.now();
    const res = await create(key, 'https://hooks.silent.test/h');
    const took = performance.now() - started;
    assert.equal(res.statusCode, 422);
    assert.match(res.body, /the name servers of hooks\.silent\.test did not answer in time/);
    // c-ares: 1 s, then 2 s more… per server; getaddrinfo with the system's settings took 10 s and more.
    assert.ok(took < 8000, `${Math.round(took)} ms`);
  });

  it('are checked again when connecting, through the same name servers', async () => {
    const receiver = await startReceiver();
    try {
      const port = new URL(receiver.url).port;
      const options = { timeoutMs: 10_000, allowPrivate: false, dnsServers: [dns.address] };
      const refused = await sendWebhook(`http://hooks.loopback.test:${port}/`, {}, '{}', options);
      assert.equal(refused.statusCode, null);
      assert.match(
        String(refused.error),
        /hooks\.loopback\.test resolves to 127\.0\.0\.1, not a public address/,
      );
      const silent = await sendWebhook(`http://hooks.silent.test:${port}/`, {}, '{}', options);
      assert.match(String(silent.error), /did not answer in time/);
      assert.ok(silent.durationMs < 8000, `${silent.durationMs} ms`);
      assert.equal(receiver.received.length, 0);
    } finally {
      await receiver.close();
    }
  });

  it('must be addresses, with a port or not', () => {
    const config = loadConfig({ WEBHOOK_DNS_SERVERS: '127.0.0.1, 10.0.0.53:5353,[::1]:53,::1' });
    assert.deepEqual(config.webhooks.dnsServers, ['127.0.0.1', '10.0.0.53:5353', '[::1]:53', '::1']);
    assert.deepEqual(loadConfig({}).webhooks.dnsServers, []);
    for (const bad of ['ns1.example.com', '127.0.0.1:99999', '[::1', '1.2.3.4:'])
      assert.throws(() => loadConfig({ WEBHOOK_DNS_SERVERS: bad }), /WEBHOOK_DNS_SERVERS/, bad);
  });
});
