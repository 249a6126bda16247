/**
 * Regressions of issue 18 (findings 4, 5): a percent-encoded parameter name (`?api%5Fkey=`, `?%61pi_key=`,
 * `X%2DCqs%2DSignature=`) slipped past the URL redaction, and a failed query logged the driver's
 * parameters (a key's SHA-256) in its message, stack and `params`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { hashApiKey } from '../src/domain/access/api-keys.ts';
import { redactUrl } from '../src/http/logging.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

/** The ways a key could show in a log: whole, its random part, its hash. */
function traces(key: string): string[] {
  return [key, key.slice(4, 20), hashApiKey(key)];
}

describe('redactUrl', () => {
  it('keeps the path and the decoded parameter names, never a value', () => {
    assert.equal(redactUrl('/a/b'), '/a/b');
    assert.equal(redactUrl('/a?api%5Fkey=K1&%61pi_key=K2&wait=3'), '/a?api_key&wait');
    assert.equal(
      redactUrl('/o/k?X%2DCqs%2DSignature=S&X-Cqs-Expires=1'),
      '/o/k?X-Cqs-Signature&X-Cqs-Expires',
    );
    assert.equal(redactUrl('/a?'), '/a');
  });
});

for (const backend of BACKENDS) {
  describe(`secrets never reach the log (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    it('redacts query keys and signatures however their names are encoded', async () => {
      const c = await h.company();
      for (const name of ['api%5Fkey', '%61pi_key', 'API_KEY'.toLowerCase()]) {
        const res = await h.app.inject({ method: 'GET', url: `/api/v1/product/list?${name}=${c.key}` });
        assert.equal(res.statusCode, 200, `${name}: ${res.body}`);
      }
      const signature = 'f00dfacecafebeef'.repeat(4);
      await h.app.inject({
        method: 'PUT',
        url: `/storage/v1/object/anything?X%2DCqs%2DExpires=1&X%2DCqs%2DSignature=${signature}`,
        payload: 'x',
      });
      const logs = h.logs();
      assert.ok(logs.includes('/api/v1/product/list?api_key'), 'the request is still logged');
      for (const t of [...traces(c.key), signature])
        assert.ok(!logs.includes(t), `log holds ${t.slice(0, 12)}…`);
    });

    it('logs a failed query without its parameters (the key hash)', async () => {
      const c = await h.company();
      const db = h.services.database.db;
      await db.execute(sql`alter table api_keys rename to api_keys_away`);
      try {
        const res = await h.request({ method: 'GET', url: '/api/v1/product/list', key: c.key });
        assert.equal(res.statusCode, 500);
      } finally {
        await db.execute(sql`alter table api_keys_away rename to api_keys`);
      }
      const logs = h.logs();
      assert.match(logs, /(query failed|failed query): select/i, 'the failed query is logged');
      for (const t of traces(c.key)) assert.ok(!logs.includes(t), `log holds ${t.slice(0, 12)}…`);
    });
  });
}
