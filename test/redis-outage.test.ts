/**
 * The limits shared through Redis when Redis stops answering (a blackholed network, a paused server) rather
 * than refusing connections: requests were held a command timeout per Redis call (two a request, 2 s in
 * all) for as long as it lasted, and a failure counted meanwhile could be left without an expiry, refusing
 * its address for good once at the limit. Now a failed command opens a breaker and requests skip Redis at
 * once, and a failure's count and expiry are one script. Also: failures are counted per IPv6 /64.
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { openSharedRedis } from '../src/adapters/redis/shared-redis.ts';
import { address, attempt, UNKNOWN_KEY } from './helpers/auth-attempts.ts';
import { type Harness, startHarness } from './helpers/harness.ts';
import { freePort } from './helpers/process.ts';
import { tcpProxy } from './helpers/tcp-proxy.ts';

/** A service whose Redis is reached through a proxy that can pause, with rate limits on; ready to ask. */
async function behindProxy(env: Record<string, string>) {
  const port = await freePort();
  const proxy = tcpProxy(port, 6379);
  await proxy.open();
  const h = await startHarness('pglite', {
    RATE_LIMIT_MAX: '1000',
    REDIS_URL: `redis://127.0.0.1:${port}`,
    ...env,
  });
  while (h.services.redis?.client.status !== 'ready') await sleep(20);
  return { h, proxy };
}

/** Lets the proxy's held bytes go, stops the service, then the proxy. */
async function closeBoth(h: Harness, proxy: ReturnType<typeof tcpProxy>) {
  proxy.resume();
  await h.close();
  await proxy.cut();
}

describe('limits while Redis stops answering', {
  skip: !process.env.TEST_DATABASE_URL && 'needs TEST_DATABASE_URL (and Redis on 127.0.0.1:6379)',
}, () => {
  let h: Harness;
  let proxy: ReturnType<typeof tcpProxy>;
  let direct: Redis;
  before(async () => {
    ({ h, proxy } = await behindProxy({ AUTH_FAILURE_MAX: '3', AUTH_FAILURE_WINDOW: '60' }));
    direct = new Redis('redis://127.0.0.1:6379');
  });
  after(async () => {
    direct.disconnect();
    await closeBoth(h, proxy);
  });

  it('answers at once after the first request finds it silent, leaves no count without an expiry, and counts again once it is back', async () => {
    const c = await h.company();
    assert.equal((await attempt(h, address(), c.key)).statusCode, 200);
    const flooder = address();
    proxy.pause();
    try {
      const times: number[] = [];
      for (let i = 0; i < 10; i++) {
        const started = performance.now();
        const res = await attempt(h, i === 0 ? flooder : address(), i === 0 ? UNKNOWN_KEY : c.key);
        times.push(performance.now() - started);
        assert.equal(res.statusCode, i === 0 ? 401 : 200, res.body);
      }
      // The first waits for one command's timeout (1 s); the others skip Redis (2 s each before).
      assert.ok((times[0] ?? 0) < 2500, `first ${times[0]} ms`);
      assert.ok(Math.max(...times.slice(1)) < 250, `then ${times.slice(1).map(Math.round)} ms`);
    } finally {
      proxy.resume();
    }
    await sleep(200);
    const ttl = await direct.pttl(`cqs-auth-failures:${flooder}`);
    assert.notEqual(ttl, -1, 'a failure counted while Redis was silent has its expiry');
    // Back: within the breaker's 5 s and a reconnection, failures are counted, and shared, again.
    const from = address();
    const deadline = Date.now() + 20_000;
    let statuses: number[] = [];
    while (Date.now() < deadline) {
      statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await attempt(h, from, UNKNOWN_KEY)).statusCode);
      if (statuses.includes(429)) break;
      await sleep(500);
    }
    assert.ok(statuses.includes(429), `statuses ${statuses}`);
    assert.ok((await direct.pttl(`cqs-auth-failures:${from}`)) > 0);
  });

  it('gives a count found without an expiry its window, so the address is not refused for good', async () => {
    const c = await h.company();
    const stuck = address();
    await direct.set(`cqs-auth-failures:${stuck}`, '5');
    const res = await attempt(h, stuck, c.key);
    assert.equal(res.statusCode, 429);
    assert.equal(res.headers['retry-after'], '60');
    const ttl = await direct.pttl(`cqs-auth-failures:${stuck}`);
    assert.ok(ttl > 55_000 && ttl <= 60_000, String(ttl));
    await direct.del(`cqs-auth-failures:${stuck}`);
  });
});

describe('the rate limiter alone while Redis stops answering', {
  skip: !process.env.TEST_DATABASE_URL && 'needs TEST_DATABASE_URL (and Redis on 127.0.0.1:6379)',
}, () => {
  let h: Harness;
  let proxy: ReturnType<typeof tcpProxy>;
  before(async () => {
    // No failure counting: only the limiter asks Redis, so only its failures can open the breaker.
    ({ h, proxy } = await behindProxy({ AUTH_FAILURE_MAX: '0' }));
  });
  after(() => closeBoth(h, proxy));

  it('opens the breaker on its first failed count, so only one request waits', async () => {
    const c = await h.company();
    const limited = await attempt(h, address(), c.key);
    assert.equal(limited.statusCode, 200);
    assert.equal(limited.headers['x-ratelimit-limit'], '1000', 'the limiter counts in Redis');
    proxy.pause();
    try {
      const times: number[] = [];
      for (let i = 0; i < 6; i++) {
        const started = performance.now();
        assert.equal((await attempt(h, address(), c.key)).statusCode, 200);
        times.push(performance.now() - started);
      }
      // Before, each waited a command timeout (1 s) until the silent socket was dropped 3 s in.
      assert.ok((times[0] ?? 0) < 2500, `first ${times[0]} ms`);
      assert.ok(Math.max(...times.slice(1)) < 250, `then ${times.slice(1).map(Math.round)} ms`);
    } finally {
      proxy.resume();
    }
  });
});

describe('a process that holds its event loop past the command limit', {
  skip: !process.env.TEST_DATABASE_URL && 'needs TEST_DATABASE_URL (and Redis on 127.0.0.1:6379)',
}, () => {
  it('neither fails a command Redis has answered nor opens the breaker', async () => {
    const redis = await openSharedRedis('redis://127.0.0.1:6379');
    try {
      while (redis.client.status !== 'ready') await sleep(20);
      const key = `cqs-test-held-loop:${randomInt(1e9)}`;
      await redis.client.set(key, '7', 'PX', 60_000);
      for (let i = 0; i < 3; i++) {
        const answer = redis.ask(() => redis.client.get(key));
        // A busy process: the loop is held 1.5 s, past the 1 s limit, while the answer waits in the socket.
        const until = performance.now() + 1500;
        while (performance.now() < until);
        assert.equal(await answer, '7');
        assert.equal(redis.usable(), true, 'the breaker stays closed');
      }
    } finally {
      redis.close();
    }
  });
});

describe('failed authentications of IPv6 clients', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('pglite', { AUTH_FAILURE_MAX: '3', AUTH_FAILURE_WINDOW: '60' });
  });
  after(() => h.close());

  it('are counted per /64, and an IPv4-mapped address as its IPv4 one', async () => {
    const prefix = `2001:db8:${randomInt(65536).toString(16)}:3`;
    const statuses: number[] = [];
    for (let n = 1; n <= 5; n++) statuses.push((await attempt(h, `${prefix}::${n}`, UNKNOWN_KEY)).statusCode);
    assert.deepEqual(statuses, [401, 401, 401, 429, 429]);
    assert.equal(
      (await attempt(h, `2001:db8:ffff:4::1`, UNKNOWN_KEY)).statusCode,
      401,
      'another /64 goes on',
    );
    const v4 = address();
    for (const from of [v4, `::ffff:${v4}`, v4])
      assert.equal((await attempt(h, from, UNKNOWN_KEY)).statusCode, 401);
    assert.equal((await attempt(h, `::ffff:${v4}`, UNKNOWN_KEY)).statusCode, 429);
  });
});
