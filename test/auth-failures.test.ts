/**
 * Regression of issue 18 (finding 7): the rate limiter ran after authentication, so a flood of unknown
 * keys got a 401 and a key look-up each, for free. Failed authentications are now limited per client
 * address (in Redis when configured): 429 with Retry-After, before any look-up.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateApiKey } from '../src/domain/access/api-keys.ts';
import { address, attempt, LIST, UNKNOWN_KEY } from './helpers/auth-attempts.ts';
import { type Harness, startHarness } from './helpers/harness.ts';

describe('failed authentications per address, in process', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('pglite', { AUTH_FAILURE_MAX: '5', AUTH_FAILURE_WINDOW: '60' });
  });
  after(() => h.close());

  it('answers 429 with Retry-After past the limit, to that address only, even with a good key', async () => {
    const c = await h.company();
    const flooder = address();
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await attempt(h, flooder, i % 2 ? UNKNOWN_KEY : `cqs_${'x'.repeat(36)}`);
      statuses.push(res.statusCode);
      if (res.statusCode === 429) {
        assert.ok(Number(res.headers['retry-after']) > 0 && Number(res.headers['retry-after']) <= 60);
        assert.match(res.json().error, /too many failed authentications/);
      }
    }
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429, 429]);
    assert.equal((await attempt(h, flooder, c.key)).statusCode, 429, 'the address waits, whatever it sends');
    assert.equal((await attempt(h, address(), c.key)).statusCode, 200, 'other addresses go on');
    const missing = await h.app.inject({ method: 'GET', url: LIST, remoteAddress: flooder });
    assert.equal(missing.statusCode, 429);
  });

  it('lets no more look-ups run at once than the address may still fail', async () => {
    const from = address();
    // Well-formed keys that no one has: each needs a look-up in the database. Checked before a look-up and
    // counted only after it, all 50 got a look-up and a 401.
    const statuses = (
      await Promise.all(Array.from({ length: 50 }, () => attempt(h, from, generateApiKey())))
    ).map((r) => r.statusCode);
    assert.equal(statuses.filter((s) => s === 401).length, 5, `${statuses}`);
    assert.equal(statuses.filter((s) => s === 429).length, 45);
  });

  it('makes a burst of good keys not in memory wait for their look-ups, not refuses it', async () => {
    const companies = await Promise.all([h.company(), h.company(), h.company()]);
    const keys = companies.flatMap((c) => [c.key, c.agentKey]);
    const from = address();
    // One failure first: the address has 4 left, so at most 4 of the 60 look up at once.
    assert.equal((await attempt(h, from, generateApiKey())).statusCode, 401);
    const statuses = (
      await Promise.all(
        Array.from({ length: 60 }, (_, i) => attempt(h, from, keys[i % keys.length] as string)),
      )
    ).map((r) => r.statusCode);
    assert.deepEqual(new Set(statuses), new Set([200]), `${statuses}`);
  });

  it('counts only failures: successes do not use up the limit', async () => {
    const c = await h.company();
    const from = address();
    for (let i = 0; i < 10; i++) assert.equal((await attempt(h, from, c.key)).statusCode, 200);
  });
});

describe('failed authentications per address, shared through Redis', {
  skip: !process.env.TEST_DATABASE_URL && 'needs TEST_DATABASE_URL',
}, () => {
  let a: Harness;
  let b: Harness;
  before(async () => {
    const env = { AUTH_FAILURE_MAX: '4', AUTH_FAILURE_WINDOW: '60', REDIS_URL: 'redis://127.0.0.1:6379' };
    a = await startHarness('postgres', env);
    b = await startHarness('postgres', env, { shareDatabaseOf: a });
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  it('counts the failures of an address across processes', async () => {
    const from = address();
    for (const h of [a, b, a, b]) assert.equal((await attempt(h, from, UNKNOWN_KEY)).statusCode, 401);
    const res = await attempt(b, from, UNKNOWN_KEY);
    assert.equal(res.statusCode, 429);
    assert.ok(Number(res.headers['retry-after']) > 0);
    assert.equal((await attempt(a, from, UNKNOWN_KEY)).statusCode, 429);
  });

  it('lets each process run at most as many look-ups at once as the address may still fail', async () => {
    const from = address();
    const statuses = (
      await Promise.all(Array.from({ length: 40 }, (_, i) => attempt(i % 2 ? a : b, from, generateApiKey())))
    ).map((r) => r.statusCode);
    // The count is shared, the look-ups under way are not: two processes, four failures each at most.
    const refused = statuses.filter((s) => s === 401).length;
    assert.ok(refused >= 4 && refused <= 8, `${statuses}`);
    assert.equal(statuses.filter((s) => s === 429).length, 40 - refused);
  });
});
