import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createPostgresDatabase, type Harness, startHarness } from './helpers/harness.ts';
import { freePort, serveCli } from './helpers/process.ts';

const LIST = '/api/v1/product/list';

describe('per-key rate limiting, in process', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('pglite', { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW: '60' });
  });
  after(() => h.close());

  it('answers 429 with Retry-After and a JSON error past the limit, per key', async () => {
    const c = await h.company();
    for (let i = 0; i < 3; i++) {
      assert.equal((await h.request({ method: 'GET', url: LIST, key: c.key })).statusCode, 200);
    }
    const limited = await h.request({ method: 'GET', url: LIST, key: c.key });
    assert.equal(limited.statusCode, 429);
    assert.ok(Number(limited.headers['retry-after']) > 0);
    assert.match(limited.json().error, /rate limit/);
    assert.equal(
      (await h.request({ method: 'GET', url: LIST, key: c.agentKey })).statusCode,
      200,
      'other keys go on',
    );
  });

  it('does not limit the public endpoints', async () => {
    for (let i = 0; i < 6; i++)
      assert.equal((await h.request({ method: 'GET', url: '/healthz' })).statusCode, 200);
  });
});

describe('per-key rate limiting shared through Redis', {
  skip: !process.env.TEST_DATABASE_URL && 'needs TEST_DATABASE_URL',
}, () => {
  let a: Harness;
  let b: Harness;
  before(async () => {
    const env = { RATE_LIMIT_MAX: '4', RATE_LIMIT_WINDOW: '60', REDIS_URL: 'redis://127.0.0.1:6379' };
    a = await startHarness('postgres', env);
    b = await startHarness('postgres', env, { shareDatabaseOf: a });
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  it('enforces one limit across two processes of one deployment', async () => {
    const c = await a.company();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      statuses.push((await a.request({ method: 'GET', url: LIST, key: c.key })).statusCode);
      statuses.push((await b.request({ method: 'GET', url: LIST, key: c.key })).statusCode);
    }
    assert.equal(statuses.filter((s) => s === 200).length, 4, `statuses ${statuses}`);
    assert.equal(statuses.filter((s) => s === 429).length, 2);
  });
});

describe('limits while Redis is out of reach', () => {
  let h: Harness;
  before(async () => {
    // Nothing listens there: every Redis command fails.
    const env = {
      RATE_LIMIT_MAX: '3',
      AUTH_FAILURE_MAX: '3',
      REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
    };
    h = await startHarness('pglite', env);
  });
  after(() => h.close());

  it('fails open at once: requests are answered, not held for a reconnection', async () => {
    const c = await h.company();
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const res = await h.request({ method: 'GET', url: LIST, key: c.key });
      assert.equal(res.statusCode, 200);
      // 6-20 s each while commands waited in the offline queue.
      assert.ok(
        performance.now() - started < 2000,
        `answered after ${Math.round(performance.now() - started)} ms`,
      );
    }
  });
});

describe('limits per process on a PostgreSQL server', {
  skip: !process.env.TEST_DATABASE_URL && 'needs TEST_DATABASE_URL',
}, () => {
  it('warns at start without REDIS_URL, and not with it', async () => {
    const db = await createPostgresDatabase();
    const dataDir = await mkdtemp(join(tmpdir(), 'cqs-limits-warning-'));
    try {
      const outputOf = async (env: Record<string, string>) => {
        const served = serveCli({
          DATABASE_URL: db.url,
          DATA_DIR: dataDir,
          PORT: String(await freePort()),
          CQS_BOOTSTRAP: 'false',
          WORKER: 'false',
          ...env,
        });
        try {
          await served.ready;
          return served.output();
        } finally {
          await served.stop();
        }
      };
      const warning = /counted in this process only \(no REDIS_URL\)/;
      assert.match(await outputOf({}), warning);
      assert.doesNotMatch(await outputOf({ REDIS_URL: 'redis://127.0.0.1:6379' }), warning);
      assert.doesNotMatch(await outputOf({ RATE_LIMIT_MAX: '0', AUTH_FAILURE_MAX: '0' }), warning);
    } finally {
      await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
