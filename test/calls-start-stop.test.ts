import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { conversationOf, conversationsOf, footprint, NOTHING, post } from './helpers/calls.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

const START = '/api/v1/call/start';
const STOP = '/api/v1/call/stop';

for (const backend of BACKENDS) {
  describe(`POST /api/v1/call/start and /call/stop (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    const body = (c: TestCompany, extra: Record<string, unknown> = {}) => ({
      conversation_id: 'call-1',
      agent_email: c.agent.email,
      ...extra,
    });
    const create = async (c: TestCompany, extra: Record<string, unknown> = {}) => {
      const res = await post(h, c, '/api/v1/call/create', {
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: 'call-1',
        ...extra,
      });
      assert.equal(res.statusCode, 200);
    };

    describe('start', () => {
      // A call that start creates has no product until call/create sets one, whatever the company holds.
      for (const products of [0, 1, 2]) {
        const company = async () => {
          const c = await h.company();
          if (products === 0)
            await h.services.database.db.execute(sql`
            update products set status = 'archived' where company_id = ${c.id}`);
          if (products === 2) await c.addProduct();
          return c;
        };

        it(`start → stop on a company with ${products} active product(s): live, then stopped, no product`, async () => {
          const c = await company();
          const res = await post(h, c, START, body(c, { metadata: { queue: 'billing', n: 1 } }));
          assert.equal(res.statusCode, 200);
          assert.deepEqual(res.json(), { success: true });
          const row = await conversationOf(h, c, 'call-1');
          assert.equal(row.state, 'live');
          assert.equal(row.agentUserId, c.agent.id);
          assert.equal(row.productId, null);
          assert.deepEqual(row.metadata, { queue: 'billing', n: 1 });
          assert.equal((await post(h, c, STOP, body(c))).statusCode, 200);
          const stopped = await conversationOf(h, c, 'call-1');
          assert.equal(stopped.state, 'stopped');
          assert.equal(stopped.productId, null);
        });

        it(`start → create on a company with ${products} active product(s): create sets the product`, async () => {
          const c = await company();
          assert.equal((await post(h, c, START, body(c))).statusCode, 200);
          const product = products === 0 ? await c.addProduct() : c.productId;
          const res = await post(h, c, '/api/v1/call/create', {
            agent_email: c.agent.email,
            product_id: product,
            conversation_id: 'call-1',
          });
          assert.equal(res.statusCode, 200);
          const row = await conversationOf(h, c, 'call-1');
          assert.equal(row.productId, product);
          assert.equal(row.state, 'live');
          assert.equal((await conversationsOf(h, c)).length, 1);
        });

        it(`start twice, and start on a stopped call, on a company with ${products} active product(s)`, async () => {
          const c = await company();
          assert.equal((await post(h, c, START, body(c))).statusCode, 200);
          const again = await post(h, c, START, body(c, { metadata: { late: true } }));
          assert.equal(again.statusCode, 200);
          assert.deepEqual((await conversationOf(h, c, 'call-1')).metadata, {});
          assert.equal((await post(h, c, STOP, body(c))).statusCode, 200);
          const stopped = await post(h, c, START, body(c));
          assert.equal(stopped.statusCode, 409);
          assert.equal((await conversationsOf(h, c)).length, 1);
        });
      }

      it('files a new call under product_id when sent', async () => {
        const c = await h.company();
        const second = await c.addProduct();
        const res = await post(h, c, START, body(c, { product_id: second }));
        assert.equal(res.statusCode, 200);
        assert.equal((await conversationOf(h, c, 'call-1')).productId, second);
      });

      it('checks product_id like call/create: 404 when not visible, 422 when archived', async () => {
        const c = await h.company();
        const other = await h.company();
        const archived = await c.addProduct({ status: 'archived' });
        const hidden = await c.addProduct();
        for (const [productId, key, status] of [
          [other.productId, c.key, 404],
          [hidden, c.agentKey, 404],
          [archived, c.key, 422],
        ] as const) {
          const res = await post(h, c, START, body(c, { product_id: productId }), key);
          assert.equal(res.statusCode, status, String(productId));
        }
        assert.deepEqual(await footprint(h, c), NOTHING);
      });

      it('marks a created call live, merges metadata and takes a sent product_id', async () => {
        const c = await h.company();
        const second = await c.addProduct();
        await create(c);
        const res = await post(h, c, START, body(c, { product_id: second, metadata: { a: 1 } }));
        assert.equal(res.statusCode, 200);
        const row = await conversationOf(h, c, 'call-1');
        assert.equal(row.state, 'live');
        assert.equal(row.productId, second);
        assert.deepEqual(row.metadata, { a: 1 });
      });

      it('is a no-op success on a live call: nothing changes, metadata included', async () => {
        const c = await h.company();
        assert.equal((await post(h, c, START, body(c, { metadata: { a: 1 } }))).statusCode, 200);
        const before = await conversationOf(h, c, 'call-1');
        const again = await post(h, c, START, body(c, { metadata: { a: 2, b: 3 } }));
        assert.equal(again.statusCode, 200);
        assert.deepEqual(again.json(), { success: true });
        const after = await conversationOf(h, c, 'call-1');
        assert.deepEqual(after, before);
      });

      it('answers 409 on a stopped call and changes nothing', async () => {
        const c = await h.company();
        await create(c);
        assert.equal((await post(h, c, STOP, body(c, { metadata: { end: true } }))).statusCode, 200);
        const before = await conversationOf(h, c, 'call-1');
        const res = await post(h, c, START, body(c, { metadata: { again: true } }));
        assert.equal(res.statusCode, 409);
        assert.deepEqual(Object.keys(res.json()), ['error']);
        assert.match(res.json().error, /is stopped/);
        assert.deepEqual(await conversationOf(h, c, 'call-1'), before);
      });

      it('ends 20 simultaneous starts of one new pair as one live call', async () => {
        const c = await h.company();
        const responses = await Promise.all(
          Array.from({ length: 20 }, (_, i) => post(h, c, START, body(c, { metadata: { [`k${i}`]: i } }))),
        );
        for (const res of responses) assert.equal(res.statusCode, 200, res.body);
        const rows = await conversationsOf(h, c);
        assert.equal(rows.length, 1);
        assert.equal(rows[0]?.state, 'live');
        // Only the start that created the call wrote metadata; the others were no-ops.
        assert.equal(Object.keys(rows[0]?.metadata as object).length, 1);
      });
    });

    describe('stop', () => {
      it('answers 404 for an unknown pair and creates nothing', async () => {
        const c = await h.company();
        const res = await post(h, c, STOP, body(c));
        assert.equal(res.statusCode, 404);
        assert.match(res.json().error, /^conversation "call-1" of agent ".*" not found$/);
        assert.deepEqual(await footprint(h, c), NOTHING);
      });

      it('stops a live call and merges metadata by top-level key', async () => {
        const c = await h.company();
        const started = await post(
          h,
          c,
          START,
          body(c, { metadata: { a: 1, nested: { x: 1, y: 2 }, keep: 'me' } }),
        );
        assert.equal(started.statusCode, 200);
        const res = await post(h, c, STOP, body(c, { metadata: { a: 2, nested: { z: 3 }, gone: null } }));
        assert.equal(res.statusCode, 200);
        assert.deepEqual(res.json(), { success: true });
        const row = await conversationOf(h, c, 'call-1');
        assert.equal(row.state, 'stopped');
        assert.deepEqual(row.metadata, { a: 2, nested: { z: 3 }, keep: 'me', gone: null });
      });

      it('stops a call that was created but never started', async () => {
        const c = await h.company();
        await create(c);
        assert.equal((await post(h, c, STOP, body(c))).statusCode, 200);
        const row = await conversationOf(h, c, 'call-1');
        assert.equal(row.state, 'stopped');
        assert.deepEqual(row.metadata, {});
      });

      it('is a no-op success on a stopped call: nothing changes, metadata included', async () => {
        const c = await h.company();
        await create(c);
        assert.equal((await post(h, c, STOP, body(c, { metadata: { a: 1 } }))).statusCode, 200);
        const before = await conversationOf(h, c, 'call-1');
        const again = await post(h, c, STOP, body(c, { metadata: { a: 9 } }));
        assert.equal(again.statusCode, 200);
        assert.deepEqual(await conversationOf(h, c, 'call-1'), before);
      });

      it('is per agent: stopping one agent’s call leaves another agent’s call of the same id', async () => {
        const c = await h.company();
        const other = await c.addUser('other@example.test');
        await create(c);
        await create(c, { agent_email: other.email });
        assert.equal(
          (await post(h, c, STOP, body(c, { agent_email: other.email.toUpperCase() }))).statusCode,
          200,
        );
        const rows = await conversationsOf(h, c);
        const states = Object.fromEntries(rows.map((r) => [r.agentUserId, r.state]));
        assert.deepEqual(states, { [c.agent.id]: 'created', [other.id]: 'stopped' });
      });
    });

    describe('both', () => {
      for (const url of [START, STOP]) {
        it(`${url}: 404 for an agent_email no active user holds, and nothing written`, async () => {
          const c = await h.company();
          const gone = await c.addUser('gone@example.test', { active: false });
          for (const email of ['nobody@example.test', gone.email]) {
            const res = await post(h, c, url, body(c, { agent_email: email }));
            assert.equal(res.statusCode, 404);
            assert.match(res.json().error, /matches no active user/);
          }
          assert.deepEqual(await footprint(h, c), NOTHING);
        });

        it(`${url}: 409 with agent_email and conflicting_user_ids, and nothing written`, async () => {
          const c = await h.company();
          await create(c);
          const before = await conversationOf(h, c, 'call-1');
          const twin = await c.addUser(c.agent.email.toUpperCase());
          const sent = c.agent.email.toLowerCase();
          const res = await post(h, c, url, body(c, { agent_email: sent, metadata: { x: 1 } }));
          assert.equal(res.statusCode, 409);
          const b = res.json();
          assert.equal(b.agent_email, sent);
          assert.deepEqual([...b.conflicting_user_ids].sort(), [c.agent.id, twin.id].sort());
          assert.deepEqual(await conversationsOf(h, c), [before]);
        });

        it(`${url}: 422 for unknown fields, missing fields and metadata that is not an object`, async () => {
          const c = await h.company();
          const cases: [Record<string, unknown>, string | RegExp][] = [
            [body(c, { extra: 1 }), 'extra: unknown field'],
            [{ agent_email: c.agent.email }, 'conversation_id: is required'],
            [{ conversation_id: 'x' }, 'agent_email: is required'],
            [body(c, { conversation_id: '' }), /^conversation_id: /],
            [body(c, { conversation_id: 'x'.repeat(256) }), /^conversation_id: /],
            [body(c, { metadata: ['a'] }), /^metadata: /],
            [body(c, { metadata: 'a' }), /^metadata: /],
            [body(c, { metadata: null }), /^metadata: /],
          ];
          if (url === STOP) cases.push([body(c, { product_id: c.productId }), 'product_id: unknown field']);
          for (const [b, message] of cases) {
            const res = await post(h, c, url, b);
            assert.equal(res.statusCode, 422, JSON.stringify(b));
            if (typeof message === 'string') assert.equal(res.json().error, message);
            else assert.match(res.json().error, message);
          }
          assert.deepEqual(await footprint(h, c), NOTHING);
        });

        it(`${url}: needs the calls scope`, async () => {
          const c = await h.company();
          assert.equal((await post(h, c, url, body(c), c.writerKey)).statusCode, 403);
          assert.equal((await h.request({ method: 'POST', url, body: body(c) })).statusCode, 401);
        });
      }
    });
  });
}
