import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { listApiKeys } from '../src/adapters/db/repositories/api-keys.ts';
import { findCompaniesByName } from '../src/adapters/db/repositories/companies.ts';
import { listProducts } from '../src/adapters/db/repositories/products.ts';
import { listUsers } from '../src/adapters/db/repositories/users.ts';
import { generateApiKey, SCOPES } from '../src/domain/access/api-keys.ts';
import { bootstrapIfEmpty } from '../src/domain/access/bootstrap.ts';
import { applySeed, parseSeedFile } from '../src/domain/access/seed.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

function seedFile(name: string, key: string) {
  return parseSeedFile({
    companies: [
      {
        name,
        users: [
          { ref: 'ann', email: 'Ann@Acme.test', role: 'admin' },
          { ref: 'bob', email: 'bob@acme.test', role: 'agent', active: false },
          { ref: 'bob2', email: 'BOB@acme.test', role: 'agent' },
        ],
        products: [
          { name: 'Sales QA', status: 'active', grant: ['bob', 'bob2'] },
          { name: 'Old line', status: 'archived' },
        ],
        api_keys: [
          { user: 'ann', scopes: ['calls'], key },
          { user: 'bob2', scopes: ['calls', 'handoff:write'] },
        ],
      },
    ],
  });
}

for (const backend of BACKENDS) {
  describe(`seed files and the bootstrap (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    it('provisions a seed file, and a second run changes nothing', async () => {
      const db = h.services.database.db;
      const name = `Acme ${Math.random()}`;
      const key = generateApiKey();
      const first = await applySeed(db, seedFile(name, key));
      assert.equal(first.newKeys.length, 1, 'the key without a value is made and reported once');
      const [company] = await findCompaniesByName(db, name);
      assert.ok(company);
      const snapshot = async () => ({
        users: (await listUsers(db, company.id)).map((u) => [u.id, u.email, u.role, u.active]),
        products: (await listProducts(db, company.id)).map((p) => [p.id, p.name, p.status]),
        keys: (await listApiKeys(db, company.id)).map((k) => [k.id, k.scopes.join(), k.revokedAt]),
      });
      const before = await snapshot();
      assert.equal(before.users.length, 3);
      assert.equal(before.products.length, 2);
      assert.equal(before.keys.length, 2);

      const second = await applySeed(db, seedFile(name, key));
      assert.deepEqual(second.created, []);
      assert.deepEqual(second.newKeys, []);
      assert.deepEqual(await snapshot(), before);
      assert.equal((await findCompaniesByName(db, name)).length, 1);

      const res = await h.request({ method: 'GET', url: '/api/v1/product/list', key });
      assert.equal(res.statusCode, 200, 'the verbatim key works');
      assert.equal(res.json().products.length, 2);
      const agentKey = first.newKeys[0]?.key as string;
      const agent = await h.request({ method: 'GET', url: '/api/v1/product/list', key: agentKey });
      assert.deepEqual(
        agent.json().products.map((p: { name: string }) => p.name),
        ['Sales QA'],
      );
    });

    it("accepts every scope of decision 22 in a seed file, and refuses one that isn't", async () => {
      const db = h.services.database.db;
      const name = `Scoped ${Math.random()}`;
      const seed = (scopes: string[]) =>
        parseSeedFile({
          companies: [
            {
              name,
              users: [{ ref: 'ann', email: 'ann@scoped.test', role: 'admin' }],
              api_keys: [{ user: 'ann', scopes }],
            },
          ],
        });
      const report = await applySeed(db, seed([...SCOPES]));
      assert.deepEqual(report.newKeys[0]?.scopes, [...SCOPES]);
      await assert.rejects(applySeed(db, seed(['calls', 'calls:write'])), /unknown scope "calls:write"/);
    });

    it('rejects a seed file with an unknown field, naming it', () => {
      assert.throws(
        () => parseSeedFile({ companies: [{ name: 'x', userz: [] }] }),
        (e: Error) => /userz|additional/.test(e.message),
      );
    });

    it('bootstraps a demo company only when the database has no company', async () => {
      // The harness database already has companies from other tests: nothing happens.
      await h.company();
      assert.equal(await bootstrapIfEmpty(h.services.database.db), undefined);
    });
  });
}
