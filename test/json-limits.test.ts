/**
 * Regressions of issue 18 (findings 1, 2, 8): deep JSON was a 500 (stack overflow when serialized), numbers
 * JSON.parse cannot keep were changed silently (1e400 became null, which removed the key), and metadata had
 * no key limit while its merge was quadratic (one PATCH froze the embedded database for 23 s).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_METADATA_KEYS, MAX_METADATA_KEYS_IN_ALL } from '../src/domain/limits.ts';
import { isNumberKept, MAX_JSON_DEPTH, scanJson } from '../src/http/json-body.ts';
import { footprint, NOTHING } from './helpers/calls.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { createRecord, patchRecord, readRecord } from './helpers/handoffs.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

/** `{"a":{"a":…1…}}` nested `levels` deep, as text (the test must not recurse either). */
function nested(levels: number): string {
  return `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
}

/** Keys `k0`… with the given value. */
function keys(n: number, value: unknown, prefix = 'k'): Record<string, unknown> {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, value]));
}

describe('the JSON scan', () => {
  it('keeps numbers whose value survives parsing and refuses the others', () => {
    for (const kept of [
      '0',
      '-1',
      '0.1',
      '1.5e3',
      '9007199254740992',
      '1e300',
      '-2.5',
      '0.30000000000000004',
      // 15 digits with a decimal point, the longest that a double always keeps.
      '123456789012.345',
      '-0.00000000000001',
    ]) {
      assert.ok(isNumberKept(kept), kept);
    }
    for (const lost of [
      '1e400',
      '-1e400',
      '1e-400',
      '-0',
      '-0.0',
      '-0.00000000000000',
      '9007199254740993',
      '1.00000000000000001',
      // 17 digits: the nearest double prints as …123.4568.
      '1234567890123.4567',
    ]) {
      assert.ok(!isNumberKept(lost), lost);
    }
  });

  it('names the field of a refused number or nesting, and ignores brackets and digits in strings', () => {
    const members = (n: number) => Array.from({ length: n }, (_, i) => `"k${i}":1`).join(',');
    assert.equal(scanJson(`{"metadata":{${members(MAX_METADATA_KEYS)}}}`), undefined);
    assert.deepEqual(scanJson(`{"metadata":{${members(MAX_METADATA_KEYS + 1)}}}`), {
      field: 'metadata',
      message: `more than ${MAX_METADATA_KEYS} top-level keys`,
    });
    // Escaped key names are the same key; other fields and nested "metadata" keys are not counted.
    assert.equal(scanJson(`{"metad\\u0061ta":{${members(MAX_METADATA_KEYS + 1)}}}`)?.field, 'metadata');
    assert.equal(scanJson(`{"other":{${members(MAX_METADATA_KEYS + 1)}}}`), undefined);
    assert.equal(scanJson(`{"x":{"metadata":{${members(MAX_METADATA_KEYS + 1)}}}}`), undefined);
    assert.equal(
      scanJson(`{"metadata":{"a":{${members(MAX_METADATA_KEYS_IN_ALL)}}}}`)?.message,
      `more than ${MAX_METADATA_KEYS_IN_ALL} keys at all depths`,
    );
    assert.deepEqual(scanJson('{"metadata":{"x":[1,2,{"big":1e400}]}}'), {
      field: 'metadata.x[2].big',
      message: 'the number 1e400 cannot be stored exactly (send it as a string)',
    });
    assert.equal(scanJson(`{"s":"[[[[ 1e400 \\" {{{{","t":${nested(MAX_JSON_DEPTH - 1)}}`), undefined);
    assert.equal(scanJson(nested(MAX_JSON_DEPTH))?.message, undefined);
    assert.equal(
      scanJson(nested(MAX_JSON_DEPTH + 1))?.message,
      `nested deeper than ${MAX_JSON_DEPTH} levels`,
    );
  });
});

for (const backend of BACKENDS) {
  describe(`JSON bodies: depth, numbers and metadata keys (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    const raw = (c: TestCompany, method: string, url: string, text: string, key = c.writerKey) =>
      h.app.inject({
        method: method as 'POST',
        url,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: text,
      });

    /** Every endpoint that stores metadata, with a body around the metadata text. */
    async function endpoints(c: TestCompany) {
      const { id } = await createRecord(h, c);
      const call = `"conversation_id":"deep-1","agent_email":"${c.agent.email}"`;
      return [
        {
          method: 'POST',
          url: '/api/v1/call/start',
          key: c.key,
          wrap: (m: string) => `{${call},"metadata":${m}}`,
        },
        {
          method: 'POST',
          url: '/api/v1/call/stop',
          key: c.key,
          wrap: (m: string) => `{${call},"metadata":${m}}`,
        },
        {
          method: 'POST',
          url: '/api/v1/call-handoff',
          key: c.writerKey,
          wrap: (m: string) => `{"metadata":${m}}`,
        },
        {
          method: 'PATCH',
          url: `/api/v1/call-handoff/${id}`,
          key: c.writerKey,
          wrap: (m: string) => `{"metadata":${m}}`,
        },
        {
          method: 'POST',
          url: `/api/v1/call-handoff/${id}/finalize`,
          key: c.writerKey,
          wrap: (m: string) => `{"metadata":${m}}`,
        },
      ];
    }

    it('refuses nesting past the limit with 422 before any work, 10,000 and 100,000 deep included', async () => {
      const c = await h.company();
      const list = await endpoints(c);
      for (const e of list) {
        for (const levels of [MAX_JSON_DEPTH, 10_000, 100_000]) {
          const res = await raw(c, e.method, e.url, e.wrap(nested(levels)), e.key);
          assert.equal(res.statusCode, 422, `${e.method} ${e.url} ${levels}: ${res.body}`);
          assert.match(res.json().error, /^metadata\.a\.a.*: nested deeper than 32 levels$/);
        }
      }
      // Nothing was done: no call, and the record is still partial and empty.
      assert.deepEqual(await footprint(h, c), NOTHING);
      const id = list[3]?.url.split('/').pop() as string;
      const record = await readRecord(h, c, id);
      assert.deepEqual(record.json().metadata, {});
    });

    it('accepts nesting at the limit on every endpoint', async () => {
      const c = await h.company();
      // The body is level 1 and metadata level 2: metadata may nest MAX_JSON_DEPTH - 1 levels.
      for (const e of await endpoints(c)) {
        const res = await raw(c, e.method, e.url, e.wrap(nested(MAX_JSON_DEPTH - 1)), e.key);
        assert.ok(res.statusCode === 200 || res.statusCode === 201, `${e.method} ${e.url}: ${res.body}`);
      }
    });

    it('refuses numbers parsing would change, naming the field, and keeps the others exactly', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c, { metadata: { keep: 'me' } });
      for (const n of ['1e400', '-0', '9007199254740993', '1e-400', '0.10000000000000000001']) {
        const res = await raw(c, 'PATCH', `/api/v1/call-handoff/${id}`, `{"metadata":{"big":${n}}}`);
        assert.equal(res.statusCode, 422, `${n}: ${res.body}`);
        assert.match(res.json().error, /^metadata\.big: the number .* cannot be stored exactly/);
      }
      const ok = await raw(
        c,
        'PATCH',
        `/api/v1/call-handoff/${id}`,
        '{"metadata":{"a":0.1,"b":9007199254740992,"c":1.5e3,"d":-2}}',
      );
      assert.equal(ok.statusCode, 200, ok.body);
      assert.deepEqual(ok.json().metadata, { keep: 'me', a: 0.1, b: 9007199254740992, c: 1500, d: -2 });
      const start = await raw(
        c,
        'POST',
        '/api/v1/call/start',
        `{"conversation_id":"n-1","agent_email":"${c.agent.email}","metadata":{"x":[1,1e400]}}`,
        c.key,
      );
      assert.equal(start.statusCode, 422, start.body);
      assert.match(start.json().error, /^metadata\.x\[1\]: /);
    });

    it(`refuses more than ${MAX_METADATA_KEYS} metadata keys per request and per record`, async () => {
      const c = await h.company();
      const tooMany = await h.request({
        method: 'POST',
        url: '/api/v1/call-handoff',
        key: c.writerKey,
        body: { metadata: keys(MAX_METADATA_KEYS + 1, 1) },
      });
      assert.equal(tooMany.statusCode, 422, tooMany.body.slice(0, 200));
      assert.match(tooMany.json().error, /^metadata: /);

      const { id } = await createRecord(h, c, { metadata: keys(MAX_METADATA_KEYS - 1, 1) });
      const over = await patchRecord(h, c, id, keys(2, 2, 'more'));
      assert.equal(over.statusCode, 422, over.body.slice(0, 200));
      assert.match(over.json().error, /more than 1000 top-level keys/);
      const fits = await patchRecord(h, c, id, { k0: null, ...keys(2, 2, 'more') });
      assert.equal(fits.statusCode, 200, fits.body);
      assert.equal(Object.keys(fits.json().metadata).length, MAX_METADATA_KEYS);

      const call = { conversation_id: 'wide-1', agent_email: c.agent.email };
      const start = await h.request({
        method: 'POST',
        url: '/api/v1/call/start',
        key: c.key,
        body: { ...call, metadata: keys(MAX_METADATA_KEYS, 1) },
      });
      assert.equal(start.statusCode, 200, start.body);
      const stop = await h.request({
        method: 'POST',
        url: '/api/v1/call/stop',
        key: c.key,
        body: { ...call, metadata: keys(1, 1, 'extra') },
      });
      assert.equal(stop.statusCode, 422, stop.body.slice(0, 200));
    });

    it(`refuses more than ${MAX_METADATA_KEYS_IN_ALL} metadata keys at all depths, in the scan, before validation`, async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c, { metadata: { keep: 'me' } });
      const nestedKeys = (n: number) => ({ a: keys(n - 1, 1) });
      const fits = await patchRecord(h, c, id, nestedKeys(MAX_METADATA_KEYS_IN_ALL));
      assert.equal(fits.statusCode, 200, fits.body.slice(0, 200));
      const over = await patchRecord(h, c, id, nestedKeys(MAX_METADATA_KEYS_IN_ALL + 1));
      assert.equal(over.statusCode, 422, over.body.slice(0, 200));
      assert.equal(over.json().error, `metadata: more than ${MAX_METADATA_KEYS_IN_ALL} keys at all depths`);
      // The probe's body: 300,000 top-level keys set to null, refused by the count, not by the schema.
      const wide = await patchRecord(h, c, id, keys(300_000, null));
      assert.equal(wide.statusCode, 422);
      assert.equal(wide.json().error, `metadata: more than ${MAX_METADATA_KEYS} top-level keys`);
      const read = await h.request({ method: 'GET', url: `/api/v1/call-handoff/${id}`, key: c.key });
      assert.deepEqual(Object.keys(read.json().metadata).sort(), ['a', 'keep']);
    });

    it('removes the most keys one request may remove while /healthz keeps answering', async () => {
      const c = await h.company();
      // At the limits: a full record with long values, and a PATCH that removes every key.
      const long = 'x'.repeat(2000);
      const { id } = await createRecord(h, c, { metadata: keys(MAX_METADATA_KEYS, long) });
      let answered = 0;
      let done = false;
      const patch = patchRecord(h, c, id, keys(MAX_METADATA_KEYS, null)).finally(() => {
        done = true;
      });
      while (!done) {
        const health = await h.app.inject({ method: 'GET', url: '/healthz' });
        assert.equal(health.statusCode, 200);
        if (!done) answered++;
        // Let the PATCH's own I/O run between two health checks.
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      const res = await patch;
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().metadata, {});
      assert.ok(answered > 0, '/healthz answered while the PATCH ran');
    });
  });
}
