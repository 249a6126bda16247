import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { updateUser } from '../src/adapters/db/repositories/users.ts';
import { generateApiKey, isWellFormedApiKey } from '../src/domain/access/api-keys.ts';
import { revokeKey } from '../src/domain/access/provisioning.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

const LIST = '/api/v1/product/list';

for (const backend of BACKENDS) {
  describe(`authentication and scopes (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    const expect401 = (res: { statusCode: number; headers: Record<string, unknown>; json(): unknown }) => {
      assert.equal(res.statusCode, 401);
      assert.match(String(res.headers['www-authenticate']), /^Bearer/);
      assert.equal(typeof (res.json() as { error: unknown }).error, 'string');
    };

    it('answers 401 with WWW-Authenticate when the key is missing', async () => {
      expect401(await h.request({ method: 'GET', url: LIST }));
    });

    it('answers 401 for a malformed key, a wrong checksum and an unknown well-formed key', async () => {
      const good = generateApiKey();
      const last = good.at(-1) === 'A' ? 'B' : 'A';
      const wrongChecksum = good.slice(0, -1) + last;
      assert.ok(!isWellFormedApiKey(wrongChecksum));
      for (const key of ['nope', 'cqs_short', wrongChecksum, good]) {
        expect401(await h.request({ method: 'GET', url: LIST, key }));
      }
      expect401(await h.request({ method: 'GET', url: LIST, headers: { authorization: 'Basic abc' } }));
    });

    it('accepts the Bearer scheme name in any case', async () => {
      const c = await h.company();
      const res = await h.request({
        method: 'GET',
        url: LIST,
        headers: { authorization: `bEaReR ${c.key}` },
      });
      assert.equal(res.statusCode, 200);
    });

    it('answers 401 for a revoked key', async () => {
      const c = await h.company();
      const k = await c.addKey(c.admin.id, ['calls']);
      assert.equal((await h.request({ method: 'GET', url: LIST, key: k.key })).statusCode, 200);
      await revokeKey(h.services.database.db, c.id, k.id);
      expect401(await h.request({ method: 'GET', url: LIST, key: k.key }));
    });

    it("answers 401 when the key's user is inactive", async () => {
      const c = await h.company();
      await updateUser(h.services.database.db, c.id, c.agent.id, { active: false });
      expect401(await h.request({ method: 'GET', url: LIST, key: c.agentKey }));
    });

    it('answers 403 when the key lacks the scope', async () => {
      const c = await h.company();
      const res = await h.request({ method: 'GET', url: LIST, key: c.writerKey });
      assert.equal(res.statusCode, 403);
      assert.match(res.json().error, /calls/);
    });

    it('accepts the deprecated api_key query parameter with Deprecation, Sunset and Link headers', async () => {
      const c = await h.company();
      const res = await h.request({ method: 'GET', url: `${LIST}?api_key=${c.key}` });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers.deprecation), /^@\d+$/);
      assert.ok(res.headers.sunset);
      assert.match(String(res.headers.link), /rel="deprecation"/);
      const bad = await h.request({ method: 'GET', url: `${LIST}?api_key=nope` });
      assert.equal(bad.statusCode, 401);
      assert.ok(bad.headers.deprecation, 'a failed query-key request still says the method is deprecated');
      const header = await h.request({ method: 'GET', url: LIST, key: c.key });
      assert.equal(header.headers.deprecation, undefined);
    });

    it('answers 400 when the key is sent both ways', async () => {
      const c = await h.company();
      const res = await h.request({ method: 'GET', url: `${LIST}?api_key=${c.key}`, key: c.key });
      assert.equal(res.statusCode, 400);
      assert.equal(typeof res.json().error, 'string');
    });

    it('needs no key for the docs, the OpenAPI document and the health endpoints', async () => {
      for (const url of ['/api/v1/openapi.json', '/healthz', '/readyz', '/api/v1/docs/']) {
        const res = await h.request({ method: 'GET', url });
        assert.equal(res.statusCode, 200, url);
      }
    });

    it('never writes a key (or the query key) into the log', async () => {
      const c = await h.company();
      await h.request({ method: 'GET', url: `${LIST}?api_key=${c.key}` });
      await h.request({ method: 'GET', url: LIST, key: c.key });
      await h.request({ method: 'GET', url: `${LIST}?api_key=${c.key}`, key: c.key });
      const logs = h.logs();
      assert.ok(logs.includes(`${LIST}?api_key"`), 'the request was logged, with the parameter name only');
      assert.ok(!logs.includes(c.key));
      assert.ok(!/cqs_[0-9A-Za-z]{36}/.test(logs));
    });

    it('never shows a key or its hash in a response', async () => {
      const c = await h.company();
      const res = await h.request({ method: 'GET', url: LIST, key: c.key });
      assert.ok(!res.body.includes('cqs_'));
      assert.ok(!/[0-9a-f]{64}/.test(res.body));
    });
  });
}

describe('API key format', () => {
  it('is cqs_ + 30 base62 + 6 base62 of the CRC32, 40 characters', () => {
    for (let i = 0; i < 200; i++) {
      const key = generateApiKey();
      assert.equal(key.length, 40);
      assert.match(key, /^cqs_[0-9A-Za-z]{36}$/);
      assert.ok(isWellFormedApiKey(key));
    }
  });

  it('matches the CRC32 of zlib for a known body', async () => {
    const { crc32 } = await import('node:zlib');
    const body = 'a'.repeat(30);
    const crc = crc32(body);
    let expected = '';
    for (let rest = crc; rest > 0; rest = Math.floor(rest / 62)) {
      expected = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'[rest % 62] + expected;
    }
    assert.ok(isWellFormedApiKey(`cqs_${body}${expected.padStart(6, '0')}`));
  });
});
