import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { and, eq } from 'drizzle-orm';
import { uploads } from '../src/adapters/db/schema.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { get, makeCall, type ReadKeys, readKeys } from './helpers/reads.ts';

const T0 = 1_763_985_600;

for (const backend of BACKENDS) {
  describe(`GET /api/v1/calls filters (${backend})`, () => {
    let h: Harness;
    let c: TestCompany;
    let keys: ReadKeys;
    /** The calls by name. */
    const call: Record<string, string> = {};
    let otherAgent: { id: string; email: string };
    let otherProduct: number;

    before(async () => {
      h = await startHarness(backend);
      c = await h.company();
      keys = await readKeys(c);
      otherAgent = await c.addUser(`Second-${Date.now()}@Example.test`);
      otherProduct = await c.addProduct();
      const make = async (name: string, spec: Parameters<typeof makeCall>[3]) => {
        const made = await makeCall(h, c, keys, spec);
        call[name] = made.id;
        return made;
      };
      await make('plain', { conversationId: 'plain', startTime: T0 });
      await make('tagged', {
        conversationId: 'tagged',
        startTime: T0 + 10,
        tags: [
          { key: 'sale_closed', type: 'boolean', value: true },
          { key: 'score', type: 'integer', value: 7 },
          { key: 'note', type: 'string', value: 'a:b' },
        ],
      });
      await make('tagged-false', {
        conversationId: 'tagged-false',
        startTime: T0 + 20,
        tags: [
          { key: 'sale_closed', type: 'boolean', value: false },
          { key: 'score', type: 'integer', value: -7 },
        ],
      });
      await make('other-agent', {
        conversationId: 'other-agent',
        startTime: T0 + 30,
        agentEmail: otherAgent.email,
        productId: otherProduct,
      });
      await make('pending', { conversationId: 'pending', startTime: T0 + 40, filename: 'a.wav' });
      const rejected = await make('rejected', {
        conversationId: 'rejected',
        startTime: T0 + 50,
        filename: 'b.wav',
      });
      // A second upload makes the first one no longer the latest: `media` follows the latest only.
      await h.services.database.db
        .update(uploads)
        .set({ status: 'rejected', reason: 'test' })
        .where(and(eq(uploads.companyId, c.id), eq(uploads.id, rejected.upload?.upload_id ?? 0)));
      await make('older-upload', { conversationId: 'older-upload', startTime: T0 + 60, filename: 'c.wav' });
      const newer = await makeCall(h, c, keys, { conversationId: 'older-upload', filename: 'd.wav' });
      await h.services.database.db
        .update(uploads)
        .set({ status: 'expired' })
        .where(and(eq(uploads.companyId, c.id), eq(uploads.id, newer.upload?.upload_id ?? 0)));
      const live = await h.request({
        method: 'POST',
        url: '/api/v1/call/start',
        key: c.key,
        body: { agent_email: c.agent.email, conversation_id: 'plain' },
      });
      assert.equal(live.statusCode, 200, live.body);
    });
    after(() => h.close());

    async function names(query: string, key = keys.admin): Promise<string[]> {
      const res = await get(h, `/api/v1/calls?${query}`, key);
      assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
      const byId = new Map(Object.entries(call).map(([name, id]) => [id, name]));
      return (res.json().calls as { id: string }[]).map((x) => byId.get(x.id) ?? x.id);
    }

    it('filters by agent_email without regard to case', async () => {
      assert.deepEqual(await names(`agent_email=${encodeURIComponent(otherAgent.email.toUpperCase())}`), [
        'other-agent',
      ]);
      assert.deepEqual(await names('agent_email=nobody%40example.test'), []);
    });

    it('filters by product_id, conversation_id and state', async () => {
      assert.deepEqual(await names(`product_id=${otherProduct}`), ['other-agent']);
      assert.deepEqual(await names('conversation_id=tagged'), ['tagged']);
      assert.deepEqual(await names('state=live'), ['plain']);
      assert.equal((await names('state=created')).length, 6);
      assert.deepEqual(await names('state=stopped'), []);
    });

    it('filters by start_time_gte (inclusive) and start_time_lt (exclusive)', async () => {
      assert.deepEqual(await names(`start_time_gte=${T0 + 50}`), ['older-upload', 'rejected']);
      assert.deepEqual(await names(`start_time_lt=${T0 + 10}`), ['plain']);
      assert.deepEqual(await names(`start_time_gte=${T0 + 10}&start_time_lt=${T0 + 20.5}`), [
        'tagged-false',
        'tagged',
      ]);
      assert.deepEqual(await names(`start_time_gte=${T0 + 9.5}&start_time_lt=${T0 + 10.5}`), ['tagged']);
    });

    it('filters by the status of the latest upload, or none', async () => {
      assert.deepEqual(await names('media=pending'), ['pending']);
      assert.deepEqual(await names('media=rejected'), ['rejected']);
      assert.deepEqual(await names('media=expired'), ['older-upload']);
      assert.deepEqual(await names('media=none'), ['other-agent', 'tagged-false', 'tagged', 'plain']);
      assert.deepEqual(await names('media=ready'), []);
    });

    it('filters by tag KEY and KEY:VALUE with values written as text, split at the first colon', async () => {
      assert.deepEqual(await names('tag=sale_closed'), ['tagged-false', 'tagged']);
      assert.deepEqual(await names('tag=sale_closed:true'), ['tagged']);
      assert.deepEqual(await names('tag=sale_closed:false'), ['tagged-false']);
      assert.deepEqual(await names('tag=score:7'), ['tagged']);
      assert.deepEqual(await names('tag=score:-7'), ['tagged-false']);
      assert.deepEqual(await names('tag=score:07'), []);
      assert.deepEqual(await names('tag=score:+7'), []);
      assert.deepEqual(await names('tag=note:a:b'), ['tagged']);
      assert.deepEqual(await names('tag=sale_closed:TRUE'), []);
      assert.deepEqual(await names('tag=missing'), []);
    });

    it('combines every filter with AND, repeated tags included', async () => {
      assert.deepEqual(await names('tag=sale_closed&tag=score:7'), ['tagged']);
      assert.deepEqual(await names('tag=sale_closed:true&tag=score:-7'), []);
      assert.deepEqual(await names(`tag=score&start_time_gte=${T0 + 15}`), ['tagged-false']);
      assert.deepEqual(
        await names(`media=none&agent_email=${encodeURIComponent(c.agent.email)}&state=created`),
        ['tagged-false', 'tagged'],
      );
      assert.deepEqual(await names(`product_id=${c.productId}&conversation_id=other-agent`), []);
    });

    it('answers 422 for a number past what a double holds exactly, not a rounded filter', async () => {
      for (const query of ['product_id=9999999999999999', 'start_time_gte=1234567890123456.123456789']) {
        const res = await get(h, `/api/v1/calls?${query}`, keys.admin);
        assert.equal(res.statusCode, 422, `${query}: ${res.body}`);
        assert.match(res.json().error, /more digits than a number can hold exactly/);
      }
    });

    it('keeps an agent to their own calls whatever the filters', async () => {
      assert.deepEqual(await names('media=none', keys.agent), ['tagged-false', 'tagged', 'plain']);
      assert.deepEqual(await names(`product_id=${otherProduct}`, keys.agent), []);
    });

    it('answers 422 naming the parameter for an unknown parameter or a malformed value', async () => {
      const cases: [string, string][] = [
        ['colour=red', 'colour'],
        ['limit=0', 'limit'],
        ['limit=1001', 'limit'],
        ['limit=0x10', 'limit'],
        ['limit=', 'limit'],
        ['limit=1.5', 'limit'],
        ['limit=1&limit=2', 'limit'],
        ['product_id=abc', 'product_id'],
        ['start_time_gte=1e9', 'start_time_gte'],
        ['start_time_lt=%205', 'start_time_lt'],
        ['state=ended', 'state'],
        ['media=done', 'media'],
        ['tag=:x', 'tag'],
        ['tag=', 'tag'],
        [`tag=${'k'.repeat(129)}`, 'tag'],
        ['cursor=abc', 'cursor'],
        ['cursor=%%%', 'cursor'],
        [`cursor=${Buffer.from('[1,"x"]').toString('base64url')}`, 'cursor'],
        [`cursor=${Buffer.from('{"a":1}').toString('base64url')}`, 'cursor'],
        ['conversation_id=', 'conversation_id'],
        ['agent_email=', 'agent_email'],
      ];
      for (const [query, name] of cases) {
        const res = await get(h, `/api/v1/calls?${query}`, keys.admin);
        assert.equal(res.statusCode, 422, `${query}: ${res.body}`);
        assert.match(res.json().error, new RegExp(`\\b${name}\\b`), query);
      }
    });

    it('accepts the deprecated api_key query parameter (auth consumes it; it is not an unknown parameter)', async () => {
      const res = await h.request({ method: 'GET', url: `/api/v1/calls?limit=1&api_key=${keys.admin}` });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().calls.length, 1);
    });
  });
}
