/**
 * The in-memory key → principal cache stays correct across processes: a change to a key, a user, a role,
 * a scope or a grant made through one process is obeyed by every process within a second (the database's
 * NOTIFY at commit), and a lost LISTEN connection empties the cache and stops caching until it is back.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { updateUser } from '../src/adapters/db/repositories/users.ts';
import { HANDOFF_CHANNEL } from '../src/adapters/notify/notifier.ts';
import { listProductsFor } from '../src/domain/access/products.ts';
import { grantProductToUser, revokeKey } from '../src/domain/access/provisioning.ts';
import { within } from './helpers/eventually.ts';
import { BACKENDS, type Harness, runBehindTheService, startHarness } from './helpers/harness.ts';

const LIST = '/api/v1/product/list';

const status = async (h: Harness, key: string, url = LIST) =>
  (await h.request({ method: 'GET', url, key })).statusCode;

/** Runs `statement` with triggers off (replica role): the database changes and nobody is told. */
async function silently(h: Harness, statement: string, params: unknown[]): Promise<void> {
  const silent = new pg.Client({ connectionString: h.databaseUrl });
  await silent.connect();
  try {
    await silent.query(`set session_replication_role = replica`);
    await silent.query(statement, params);
  } finally {
    await silent.end();
  }
}

describe('principal cache across two processes (postgres)', { skip: !BACKENDS.includes('postgres') }, () => {
  let a: Harness;
  let b: Harness;
  before(async () => {
    a = await startHarness('postgres');
    b = await startHarness('postgres', {}, { shareDatabaseOf: a });
    await within(
      5000,
      'both notifiers listen',
      () => a.services.notifier.listening && b.services.notifier.listening,
    );
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  /**
   * Resolves once both processes have heard every notification committed before it. The test's own setup
   * (a company, its users, keys and products) notifies "*access", on which a process forgets every entry:
   * a notice still on its way, late under load, would empty a cache the test has just filled. The database
   * hands a listener its notifications in commit order, so a marker notified now arrives after all of them.
   */
  async function settled(): Promise<void> {
    const marker = `*settled:${randomUUID()}`;
    let heard = 0;
    const unsubscribes: (() => void)[] = [];
    for (const h of [a, b]) {
      unsubscribes.push(
        await h.services.notifier.subscribe(marker, () => {
          heard++;
        }),
      );
    }
    try {
      await a.services.database.db.execute(sql`select pg_notify(${HANDOFF_CHANNEL}, ${marker})`);
      await within(5000, 'both processes heard the marker', () => heard >= 2);
    } finally {
      for (const unsubscribe of unsubscribes) unsubscribe();
    }
  }

  /** A key both processes have answered, so both have it cached. */
  async function cachedOnBoth(key: string): Promise<void> {
    await settled();
    for (const h of [a, b]) {
      assert.equal(await status(h, key), 200);
      assert.ok(h.services.principalCache.size > 0, `${h === a ? 'a' : 'b'} cached the key`);
    }
  }

  it('serves a key seen before from memory (a change the triggers do not announce is not seen)', async () => {
    const c = await a.company();
    await cachedOnBoth(c.key);
    // With triggers off (replica role), the database changes silently: the cache still answers.
    await silently(a, `update api_keys set scopes = '{handoff:write}' where company_id = $1`, [c.id]);
    assert.equal(await status(b, c.key), 200, 'the cached principal answered without a query');
  });

  it('refuses a key revoked through one process on both within 1 s', async () => {
    const c = await a.company();
    const k = await c.addKey(c.admin.id, ['calls']);
    await cachedOnBoth(k.key);
    await revokeKey(a.services.database.db, c.id, k.id);
    assert.equal(await status(a, k.key), 401, 'the writing process refuses at once');
    await within(
      1000,
      'the other process refuses the revoked key',
      async () => (await status(b, k.key)) === 401,
    );
  });

  it('refuses the keys of a user deactivated through one process on both within 1 s', async () => {
    const c = await a.company();
    await cachedOnBoth(c.agentKey);
    await updateUser(a.services.database.db, c.id, c.agent.id, { active: false });
    assert.equal(await status(a, c.agentKey), 401);
    await within(
      1000,
      "the other process refuses the inactive user's key",
      async () => (await status(b, c.agentKey)) === 401,
    );
  });

  it('obeys a changed scope, role and product grant on both within 1 s', async () => {
    const c = await a.company();
    await cachedOnBoth(c.key);
    // A scope taken away (written by hand, as an operator would).
    await a.services.database.db.execute(
      sql`update api_keys set scopes = '{handoff:write}' where company_id = ${c.id} and user_id = ${c.admin.id} and 'calls' = any(scopes)`,
    );
    await within(
      1000,
      'the other process answers 403 for the lost scope',
      async () => (await status(b, c.key)) === 403,
    );
    // A grant given: the agent sees the new product everywhere.
    await cachedOnBoth(c.agentKey);
    const product = await c.addProduct();
    await grantProductToUser(a.services.database.db, c.id, product, c.agent.id);
    await within(1000, 'the other process lists the granted product', async () => {
      const res = await b.request({ method: 'GET', url: LIST, key: c.agentKey });
      return res.json().products.some((p: { id: number }) => p.id === product);
    });
    // A role changed: an admin made agent no longer sees the company's other products.
    const k = await c.addKey(c.admin.id, ['calls']);
    await cachedOnBoth(k.key);
    const other = await c.addProduct();
    await updateUser(a.services.database.db, c.id, c.admin.id, { role: 'agent' });
    await within(1000, 'the other process treats the former admin as an agent', async () => {
      const res = await b.request({ method: 'GET', url: LIST, key: k.key });
      return res.statusCode === 200 && !res.json().products.some((p: { id: number }) => p.id === other);
    });
  });

  it("serves a user's product list from memory and shows a product added or archived through the other process within 1 s", async () => {
    const c = await a.company();
    await settled();
    const names = async (h: Harness) =>
      (await h.request({ method: 'GET', url: LIST, key: c.key }))
        .json()
        .products.map((p: { id: number; name: string; status: string }) => `${p.id}:${p.name}:${p.status}`);
    const first = await names(b);
    assert.deepEqual(await names(b), first);
    // Renamed silently (no trigger): the list is answered from memory, without a query.
    await silently(a, `update products set name = name || ' (renamed)' where company_id = $1`, [c.id]);
    assert.deepEqual(await names(b), first, 'the cached list answered');
    // A product inserted through the other process (migration 0015: inserts notify too).
    const added = await c.addProduct();
    await within(1000, 'the other process lists the new product', async () =>
      (await names(b)).some((n: string) => n.startsWith(`${added}:`)),
    );
    await a.services.database.db.execute(
      sql`update products set status = 'archived' where company_id = ${c.id} and id = ${added}`,
    );
    await within(1000, 'the other process lists the product as archived', async () =>
      (await names(b)).some((n: string) => n.startsWith(`${added}:`) && n.endsWith(':archived')),
    );
  });

  it('empties the cache when the LISTEN connection is killed, caches nothing meanwhile, and listens again', async () => {
    const c = await a.company();
    await cachedOnBoth(c.key);
    const killed = await a.services.database.db.execute(
      sql`select pg_terminate_backend(pid) from pg_stat_activity
          where datname = current_database() and query ilike 'LISTEN%' and pid <> pg_backend_pid()`,
    );
    assert.equal((killed as unknown as { rows: unknown[] }).rows.length, 2, 'one listener per process');
    await within(
      2000,
      'both processes see the loss',
      () => !a.services.notifier.listening && !b.services.notifier.listening,
    );
    assert.equal(b.services.principalCache.size, 0, 'the cache was emptied');
    // While nobody listens, every request asks the database: a revocation now is obeyed at once.
    const k = await c.addKey(c.admin.id, ['calls']);
    if (!b.services.notifier.listening) {
      assert.equal(await status(b, k.key), 200);
      assert.equal(b.services.principalCache.size, 0, 'nothing is cached while not listening');
      await revokeKey(a.services.database.db, c.id, k.id);
      assert.equal(await status(b, k.key), 401);
    }
    await within(
      5000,
      'both processes listen again',
      () => a.services.notifier.listening && b.services.notifier.listening,
    );
    // And the notices work on the new connections.
    const again = await c.addKey(c.admin.id, ['calls']);
    await cachedOnBoth(again.key);
    await revokeKey(a.services.database.db, c.id, again.id);
    await within(
      1000,
      'the other process refuses after reconnecting',
      async () => (await status(b, again.key)) === 401,
    );
  });
});

for (const backend of BACKENDS) {
  describe(`principal cache in one process (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    it('forgets a key changed behind the service (the trigger path) within 1 s', async () => {
      const c = await h.company();
      const k = await c.addKey(c.admin.id, ['calls']);
      assert.equal(await status(h, k.key), 200);
      await within(
        1000,
        'the cache listens',
        () => h.services.principalCache.size > 0 || h.services.notifier.listening,
      );
      assert.equal(await status(h, k.key), 200);
      assert.ok(h.services.principalCache.size > 0, 'the key is cached');
      // Straight to the driver, past the service's own write watch: only the NOTIFY can tell.
      await runBehindTheService(h, `update api_keys set revoked_at = now() where id = '${k.id}'`);
      await within(1000, 'the revoked key is refused', async () => (await status(h, k.key)) === 401);
    });

    it("never serves a product list loaded with a user's old role to the new one", async () => {
      const c = await h.company();
      await c.addProduct(); // granted to nobody
      const listed = async () =>
        ((await h.request({ method: 'GET', url: LIST, key: c.key })).json() as { products: { id: number }[] })
          .products.length;
      assert.equal(await listed(), 2, 'the admin sees both products');
      // The setup's own notices may still empty the cache: ask until the key stays in it.
      await within(
        1000,
        'the admin key is cached',
        async () => (await listed()) === 2 && h.services.principalCache.peek(c.key) !== undefined,
      );
      const asAdmin = h.services.principalCache.peek(c.key);
      assert.equal(asAdmin?.role, 'admin');
      await updateUser(h.services.database.db, c.id, c.admin.id, { role: 'agent' });
      // A request authenticated before the change loads its list after it, with the principal it had.
      const inFlight = await listProductsFor(h.services.database.db, asAdmin, h.services.principalCache);
      assert.equal(inFlight.length, 2);
      assert.equal(await listed(), 0, 'the agent, granted nothing, sees no product');
    });

    it('refuses at once a key revoked through this process', async () => {
      const c = await h.company();
      const k = await c.addKey(c.admin.id, ['calls']);
      assert.equal(await status(h, k.key), 200);
      assert.equal(await status(h, k.key), 200);
      await revokeKey(h.services.database.db, c.id, k.id);
      assert.equal(await status(h, k.key), 401);
      await h.services.database.db.transaction(async (tx) => {
        await updateUser(tx, c.id, c.agent.id, { active: false });
      });
      assert.equal(await status(h, c.agentKey), 401);
    });
  });
}
