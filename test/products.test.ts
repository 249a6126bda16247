import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

for (const backend of BACKENDS) {
  describe(`GET /api/v1/product/list (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    it('shows an admin every product of the company, active and archived', async () => {
      const c = await h.company();
      const archived = await c.addProduct({ status: 'archived' });
      const res = await h.request({ method: 'GET', url: '/api/v1/product/list', key: c.key });
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.deepEqual(
        body.products.map((p: { id: number }) => p.id),
        [c.productId, archived],
      );
      assert.deepEqual(Object.keys(body.products[0]).sort(), ['id', 'name', 'status']);
      assert.equal(body.products[1].status, 'archived');
    });

    it('shows a non-admin only the products granted to them', async () => {
      const c = await h.company();
      await c.addProduct();
      const res = await h.request({ method: 'GET', url: '/api/v1/product/list', key: c.agentKey });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(
        res.json().products.map((p: { id: number }) => p.id),
        [c.productId],
      );
    });

    it("never shows another company's products", async () => {
      const a = await h.company();
      const b = await h.company();
      const res = await h.request({ method: 'GET', url: '/api/v1/product/list', key: a.key });
      const ids = res.json().products.map((p: { id: number }) => p.id);
      assert.ok(!ids.includes(b.productId));
      assert.deepEqual(ids, [a.productId]);
    });
  });
}
