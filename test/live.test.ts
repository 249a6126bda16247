import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { conversationOf, conversationsOf, post, tagsOf } from './helpers/calls.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

const sale = (id: string) => `/api/v1/live/${encodeURIComponent(id)}/data/sale`;
const customer = (id: string) => `/api/v1/live/${encodeURIComponent(id)}/data/customer`;

function assertDeprecated(res: LightMyRequestResponse): void {
  assert.match(String(res.headers.deprecation), /^@\d+$/);
  assert.match(String(res.headers.link), /^<http:\/\/127\.0\.0\.1:8080\/api\/v1\/docs>; rel="deprecation"/);
  assert.equal(res.headers.sunset, undefined);
}

for (const backend of BACKENDS) {
  describe(`deprecated live endpoints (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    async function withCall(
      conversationId = 'call-1',
      agentEmail?: string,
    ): Promise<{ c: TestCompany; uuid: string }> {
      const c = await h.company();
      await createCall(c, conversationId, agentEmail ?? c.agent.email);
      return { c, uuid: (await conversationOf(h, c, conversationId)).id };
    }
    async function createCall(c: TestCompany, conversationId: string, agentEmail: string) {
      const res = await post(h, c, '/api/v1/call/create', {
        agent_email: agentEmail,
        product_id: c.productId,
        conversation_id: conversationId,
      });
      assert.equal(res.statusCode, 200);
    }

    it('data/sale stores closed as the boolean tag sale_closed, replaced by a later request', async () => {
      const { c, uuid } = await withCall();
      const res = await post(h, c, sale('call-1'), { closed: true });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { success: true });
      assertDeprecated(res);
      assert.deepEqual(await tagsOf(h, c, uuid), { sale_closed: ['boolean', true] });
      assert.equal((await post(h, c, sale('call-1'), { closed: false })).statusCode, 200);
      assert.deepEqual(await tagsOf(h, c, uuid), { sale_closed: ['boolean', false] });
    });

    it('data/customer stores account_id as the string tag customer_account_id', async () => {
      const { c, uuid } = await withCall();
      const res = await post(h, c, customer('call-1'), { account_id: 'ACME-42' });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { success: true });
      assertDeprecated(res);
      assert.deepEqual(await tagsOf(h, c, uuid), { customer_account_id: ['string', 'ACME-42'] });
    });

    it('finds a conversation_id that needs escaping in the path', async () => {
      const { c, uuid } = await withCall('queue/7 #1');
      assert.equal((await post(h, c, sale('queue/7 #1'), { closed: true })).statusCode, 200);
      assert.deepEqual(await tagsOf(h, c, uuid), { sale_closed: ['boolean', true] });
    });

    it('finds a conversation_id of the longest length allowed, 255 characters, escaped in the path', async () => {
      for (const id of ['a'.repeat(255), 'é/'.repeat(127)]) {
        const { c, uuid } = await withCall(id);
        assert.equal((await post(h, c, sale(id), { closed: true })).statusCode, 200);
        assert.equal((await post(h, c, customer(id), { account_id: 'A-1' })).statusCode, 200);
        assert.deepEqual(await tagsOf(h, c, uuid), {
          customer_account_id: ['string', 'A-1'],
          sale_closed: ['boolean', true],
        });
      }
    });

    it('shares tags with call/add_tags: the live endpoints replace what add_tags stored', async () => {
      const { c, uuid } = await withCall();
      const add = await post(h, c, '/api/v1/call/add_tags', {
        conversation_id: 'call-1',
        agent_email: c.agent.email,
        tags: [{ key: 'sale_closed', type: 'string', value: 'unknown' }],
      });
      assert.equal(add.statusCode, 200);
      assert.equal((await post(h, c, sale('call-1'), { closed: true })).statusCode, 200);
      assert.deepEqual(await tagsOf(h, c, uuid), { sale_closed: ['boolean', true] });
    });

    for (const [name, url, field] of [
      ['data/sale', sale, 'closed'],
      ['data/customer', customer, 'account_id'],
    ] as const) {
      it(`${name}: 422 "no data provided" for {} or a null ${field}, and nothing changes`, async () => {
        const { c, uuid } = await withCall();
        for (const b of [{}, { [field]: null }]) {
          const res = await post(h, c, url('call-1'), b);
          assert.equal(res.statusCode, 422);
          assert.deepEqual(res.json(), { error: 'no data provided' });
          assertDeprecated(res);
        }
        assert.deepEqual(await tagsOf(h, c, uuid), {});
      });

      it(`${name}: 404 when no call of the company has the conversation_id`, async () => {
        const { c, uuid } = await withCall();
        const elsewhere = await withCall('theirs');
        const value = field === 'closed' ? true : 'A-1';
        for (const id of ['nope', 'theirs']) {
          const res = await post(h, c, url(id), { [field]: value });
          assert.equal(res.statusCode, 404);
          assert.equal(res.json().error, `conversation "${id}" not found`);
          assertDeprecated(res);
        }
        assert.deepEqual(await tagsOf(h, c, uuid), {});
        assert.deepEqual(await tagsOf(h, elsewhere.c, elsewhere.uuid), {});
      });

      it(`${name}: 409 {"error"} when calls of several agents have the conversation_id`, async () => {
        const { c } = await withCall();
        const other = await c.addUser('other@example.test');
        await createCall(c, 'call-1', other.email);
        const res = await post(h, c, url('call-1'), { [field]: field === 'closed' ? true : 'A-1' });
        assert.equal(res.statusCode, 409);
        assert.deepEqual(Object.keys(res.json()), ['error']);
        assert.match(res.json().error, /ambiguous/);
        assertDeprecated(res);
        for (const row of await conversationsOf(h, c)) assert.deepEqual(await tagsOf(h, c, row.id), {});
      });

      it(`${name}: 422 for unknown fields and wrong types; deprecation headers on 401 too`, async () => {
        const { c, uuid } = await withCall();
        const unknown = await post(h, c, url('call-1'), {
          [field]: field === 'closed' ? true : 'A',
          note: 1,
        });
        assert.equal(unknown.statusCode, 422);
        assert.equal(unknown.json().error, 'note: unknown field');
        const wrong = await post(h, c, url('call-1'), { [field]: field === 'closed' ? 'yes' : 42 });
        assert.equal(wrong.statusCode, 422);
        assert.match(wrong.json().error, new RegExp(`^${field}: `));
        assert.deepEqual(await tagsOf(h, c, uuid), {});
        const anonymous = await h.request({ method: 'POST', url: url('call-1'), body: { [field]: null } });
        assert.equal(anonymous.statusCode, 401);
        assertDeprecated(anonymous);
        assert.equal((await post(h, c, url('call-1'), { [field]: null }, c.writerKey)).statusCode, 403);
      });
    }

    it('data/customer refuses an empty account_id', async () => {
      const { c, uuid } = await withCall();
      const res = await post(h, c, customer('call-1'), { account_id: '' });
      assert.equal(res.statusCode, 422);
      assert.match(res.json().error, /^account_id: /);
      assert.deepEqual(await tagsOf(h, c, uuid), {});
    });
  });
}
