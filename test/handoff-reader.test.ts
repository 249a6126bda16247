import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import {
  assertRecordShape,
  createRecord,
  finalizeRecord,
  type HandoffBody,
  patchRecord,
  readRecord,
} from './helpers/handoffs.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

const FINAL_CACHE = 'private, max-age=31536000, immutable';

for (const backend of BACKENDS) {
  describe(`GET /api/v1/call-handoff/{handoff_id} (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    it('shows all six fields of a partial record, finalized_at null, no-store, with an ETag', async () => {
      const c = await h.company();
      const { id, body: created } = await createRecord(h, c, { metadata: { intent: 'billing' } });
      const res = await readRecord(h, c, id);
      assert.equal(res.statusCode, 200);
      const body = res.json() as HandoffBody;
      assertRecordShape(body);
      assert.deepEqual(body, created);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers.etag, `"${id}-v1"`);
    });

    it('shows a final record with the immutable Cache-Control', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c, { metadata: { a: 1 } });
      const final = (await finalizeRecord(h, c, id)).json();
      const res = await readRecord(h, c, id);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), final);
      assertRecordShape(res.json());
      assert.equal(res.headers['cache-control'], FINAL_CACHE);
      assert.equal(res.headers.etag, `"${id}-v2"`);
    });

    it('says a final record varies with the key, so a browser keeps no copy across keys', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c, { metadata: { a: 1 } });
      assert.equal((await finalizeRecord(h, c, id)).statusCode, 200);
      for (const etag of [undefined, `"${id}-v2"`]) {
        const res = await readRecord(h, c, id, etag ? { etag } : {});
        assert.equal(res.statusCode, etag ? 304 : 200);
        assert.equal(res.headers.vary, 'Authorization');
      }
    });

    it('answers 304 without a body to If-None-Match with the current ETag (weak, listed or *)', async () => {
      const c = await h.company();
      const { id, etag } = await createRecord(h, c);
      for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const res = await h.request({
          method: 'GET',
          url: `/api/v1/call-handoff/${id}`,
          key: c.key,
          headers: { 'if-none-match': header },
        });
        assert.equal(res.statusCode, 304, header);
        assert.equal(res.body, '');
        assert.equal(res.headers.etag, etag);
        assert.equal(res.headers['cache-control'], 'no-store');
        assert.equal(res.headers['content-length'], undefined);
      }
      await patchRecord(h, c, id, { a: 1 });
      const changed = await readRecord(h, c, id, { etag });
      assert.equal(changed.statusCode, 200);
      assert.notEqual(changed.headers.etag, etag);
      const final = await finalizeRecord(h, c, id);
      const notModified = await readRecord(h, c, id, { etag: String(final.headers.etag) });
      assert.equal(notModified.statusCode, 304);
      assert.equal(notModified.headers['cache-control'], FINAL_CACHE);
    });

    it('answers 404 {"error"} for an unknown id and for another company’s record, final or not', async () => {
      const a = await h.company();
      const b = await h.company();
      const partial = await createRecord(h, a);
      const final = await createRecord(h, a);
      await finalizeRecord(h, a, final.id);
      // Read once by the owner so that the final record is in the cache.
      assert.equal((await readRecord(h, a, final.id)).statusCode, 200);
      for (const id of [randomUUID(), partial.id, final.id]) {
        for (const wait of [undefined, 1]) {
          const res = await readRecord(h, b, id, wait === undefined ? {} : { wait });
          assert.equal(res.statusCode, 404, `${id} ${wait}`);
          assert.deepEqual(Object.keys(res.json()), ['error']);
          assert.equal(res.headers.etag, undefined);
        }
      }
    });

    it('answers 422 for an id that is not a UUID, and for wait outside 0–30 or not a number', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c);
      for (const bad of ['not-a-uuid', '123', `${id}x`, `urn:uuid:${id}`, `{${id}}`]) {
        const res = await h.request({ method: 'GET', url: `/api/v1/call-handoff/${bad}`, key: c.key });
        assert.equal(res.statusCode, 422, bad);
        assert.match(res.json().error, /handoff_id/);
      }
      for (const wait of ['31', '30.5', '-1', '-0.5', 'abc', '', '1000', '5s']) {
        const res = await h.request({
          method: 'GET',
          url: `/api/v1/call-handoff/${id}?wait=${wait}`,
          key: c.key,
        });
        assert.equal(res.statusCode, 422, wait);
        assert.match(res.json().error, /^query\.wait: /);
      }
      const zero = await readRecord(h, c, id, { wait: 0 });
      assert.equal(zero.statusCode, 200);
      const started = Date.now();
      const fraction = await readRecord(h, c, id, { wait: 0.2, etag: String(zero.headers.etag) });
      assert.equal(fraction.statusCode, 304, 'fractions of a second are allowed');
      assert.ok(Date.now() - started >= 150);
    });

    it('accepts an upper-case UUID and unknown query parameters (cache busters)', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c);
      const res = await h.request({
        method: 'GET',
        url: `/api/v1/call-handoff/${id.toUpperCase()}?_=${Date.now()}`,
        key: c.key,
      });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().handoff_id, id);
    });

    it('still authenticates with the deprecated api_key query parameter, with the deprecation headers', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c);
      const res = await h.request({
        method: 'GET',
        url: `/api/v1/call-handoff/${id}?api_key=${c.key}&wait=0`,
      });
      assert.equal(res.statusCode, 200);
      assert.ok(res.headers.deprecation);
    });

    it('answers a final record from memory without the database, and never to another company', async () => {
      const a = await h.company();
      const b = await h.company();
      const { id } = await createRecord(h, a, { metadata: { a: 1 } });
      const partial = await createRecord(h, a);
      const final = (await finalizeRecord(h, a, id)).json();
      assert.equal((await readRecord(h, a, id)).statusCode, 200);
      assert.ok(h.services.handoffCache.get(`${a.id}:${id}`), 'the final record is cached');
      assert.equal(h.services.handoffCache.get(`${a.id}:${partial.id}`), undefined, 'a partial one never is');
      // Take the table away: only answers that need no query of it still work.
      const db = h.services.database.db;
      await db.execute(sql`alter table call_handoffs rename to call_handoffs_away`);
      try {
        const cached = await readRecord(h, a, id);
        assert.equal(cached.statusCode, 200);
        assert.deepEqual(cached.json(), final);
        assert.equal(cached.headers['cache-control'], FINAL_CACHE);
        const withWait = await readRecord(h, a, id, { wait: 5, etag: String(cached.headers.etag) });
        assert.equal(withWait.statusCode, 304, 'a final record answers a wait at once');
        assert.equal((await readRecord(h, a, partial.id)).statusCode, 500);
        // Another company is not answered from the cache: it reaches the (missing) table.
        assert.notEqual((await readRecord(h, b, id)).statusCode, 200);
        // Auth still applies to cached records.
        const anonymous = await h.request({ method: 'GET', url: `/api/v1/call-handoff/${id}` });
        assert.equal(anonymous.statusCode, 401);
        const writer = await h.request({
          method: 'GET',
          url: `/api/v1/call-handoff/${id}`,
          key: a.writerKey,
        });
        assert.equal(writer.statusCode, 403);
      } finally {
        await db.execute(sql`alter table call_handoffs_away rename to call_handoffs`);
      }
    });

    it('is described in the OpenAPI document with the wait parameter, caching headers and every status', async () => {
      const res = await h.request({ method: 'GET', url: '/api/v1/openapi.json' });
      const doc = res.json();
      const path = doc.paths['/api/v1/call-handoff/{handoff_id}'];
      const get = path.get;
      assert.deepEqual(Object.keys(get.responses).sort(), [
        '200',
        '304',
        '400',
        '401',
        '403',
        '404',
        '422',
        '429',
        '503',
      ]);
      assert.ok(get.responses['200'].headers.ETag);
      assert.ok(get.responses['200'].headers['Cache-Control']);
      assert.equal(get.responses['304'].content, undefined);
      const wait = get.parameters.find((p: { name: string }) => p.name === 'wait');
      assert.equal(wait.in, 'query');
      assert.equal(wait.schema.maximum, 30);
      assert.match(get.description, /If-None-Match/);
      assert.match(get.description, /record\.final/);
      assert.deepEqual(
        Object.keys(get.responses['200'].content['application/json'].schema.properties).sort(),
        ['created_at', 'final', 'finalized_at', 'handoff_id', 'metadata', 'updated_at'],
      );
      assert.ok(path.patch.responses['409']);
      assert.ok(doc.paths['/api/v1/call-handoff'].post.responses['201'].headers.Location);
      assert.ok(doc.paths['/api/v1/call-handoff/{handoff_id}/finalize'].post.responses['409']);
      for (const op of [get, path.patch, doc.paths['/api/v1/call-handoff'].post]) {
        assert.deepEqual(op.security, [{ bearerAuth: [] }, { apiKeyQuery: [] }]);
      }
    });
  });
}
