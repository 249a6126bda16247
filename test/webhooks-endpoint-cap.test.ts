/**
 * A company has at most WEBHOOK_ENDPOINTS_MAX webhook endpoints, enabled or not: each event is sent to each
 * of them, so without a bound one company could multiply the deliveries every process sends. Past it a
 * create is a 409 that creates nothing; other companies are not counted; concurrent creates never pass it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

for (const backend of BACKENDS) {
  describe(`the webhook endpoints cap (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend, { WEBHOOK_ENDPOINTS_MAX: '3', WEBHOOK_ALLOW_PRIVATE: 'true' });
    });
    after(() => h.close());

    async function companyKey() {
      const c = await h.company();
      return (await c.addKey(c.admin.id, ['webhooks'])).key;
    }
    const create = (key: string, n: number) =>
      h.request({
        method: 'POST',
        url: '/api/v1/webhooks',
        key,
        body: { url: `http://127.0.0.1:9/hook/${n}` },
      });
    const count = async (key: string) =>
      ((await h.request({ method: 'GET', url: '/api/v1/webhooks', key })).json() as { webhooks: unknown[] })
        .webhooks.length;

    it('refuses the fourth with a 409 that creates nothing, counts disabled ones, and frees a place on delete', async () => {
      const key = await companyKey();
      const ids: string[] = [];
      for (let n = 0; n < 3; n++) {
        const res = await create(key, n);
        assert.equal(res.statusCode, 201, res.body);
        ids.push((res.json() as { id: string }).id);
      }
      const disabled = await h.request({
        method: 'PATCH',
        url: `/api/v1/webhooks/${ids[0]}`,
        key,
        body: { enabled: false },
      });
      assert.equal(disabled.statusCode, 200, disabled.body);
      const refused = await create(key, 3);
      assert.equal(refused.statusCode, 409, refused.body);
      assert.deepEqual(refused.json(), {
        error:
          'the company has 3 webhook endpoints, the most allowed (WEBHOOK_ENDPOINTS_MAX); delete one first',
      });
      assert.equal(await count(key), 3);
      // Another company's endpoints are its own.
      assert.equal((await create(await companyKey(), 0)).statusCode, 201);
      const deleted = await h.request({ method: 'DELETE', url: `/api/v1/webhooks/${ids[1]}`, key });
      assert.equal(deleted.statusCode, 204, deleted.body);
      assert.equal((await create(key, 4)).statusCode, 201);
      assert.equal(await count(key), 3);
    });

    it('lets exactly three of twelve concurrent creates through', async () => {
      const key = await companyKey();
      const answers = await Promise.all(Array.from({ length: 12 }, (_, n) => create(key, n)));
      const codes = answers.map((r) => r.statusCode).sort();
      assert.deepEqual(codes, [201, 201, 201, ...Array(9).fill(409)], answers.map((r) => r.body).join('\n'));
      assert.equal(await count(key), 3);
    });
  });
}
