/**
 * The planner's statistics kept up by the worker (src/adapters/db/upkeep.ts): PGlite has no autovacuum, and
 * PostgreSQL's first visits a new database only after a minute, so a table filled meanwhile was planned as
 * empty; the foreign-key checks of every call write then scanned a whole index instead of the primary key.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../src/adapters/db/prepared.ts';
import { keepUpStatistics } from '../src/adapters/db/upkeep.ts';
import { post } from './helpers/calls.ts';
import { within } from './helpers/eventually.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

/** Enough rows that reading one by its primary key beats reading the table. */
const CALLS = 300;

for (const backend of BACKENDS) {
  describe(`database upkeep (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    const tableStats = async (table: string) => {
      const [row] = rowsOf<{ reltuples: number; n_mod_since_analyze: number; n_dead_tup: number }>(
        await h.services.database.db.execute(sql`
          select c.reltuples::float8 as reltuples, s.n_mod_since_analyze::int as n_mod_since_analyze,
            s.n_dead_tup::int as n_dead_tup
          from pg_class c join pg_stat_user_tables s on s.relid = c.oid
          where s.schemaname = 'public' and c.relname = ${table}`),
      );
      assert.ok(row, table);
      return row;
    };

    /** The index the cached (generic) plan of the foreign-key check of a call's row reads. */
    const foreignKeyCheckIndex = () =>
      h.services.database.db.transaction(async (tx) => {
        await tx.execute(sql`set local plan_cache_mode = force_generic_plan`);
        await tx.execute(sql`prepare cqs_fk_probe(uuid, uuid) as
          select 1 from only conversations x where company_id = $1 and id = $2 for key share of x`);
        const plan = rowsOf<Record<string, string>>(
          await tx.execute(sql`explain execute cqs_fk_probe(gen_random_uuid(), gen_random_uuid())`),
        )
          .map((r) => Object.values(r).join(' '))
          .join('\n');
        await tx.execute(sql`deallocate cqs_fk_probe`);
        return /using (\S+) on conversations/.exec(plan)?.[1] ?? plan;
      });

    it('analyses the tables a burst of calls filled, so a call row is found by its primary key', async () => {
      const c = await h.company();
      for (let i = 0; i < CALLS; i++) {
        const res = await post(h, c, '/api/v1/call/create', {
          agent_email: c.agent.email,
          product_id: c.productId,
          conversation_id: `upkeep-${i}`,
          transcript: [{ role: 'agent', text: 'hello', start: 0, stop: 1 }],
          tags: [{ key: 'queue', value: 'billing', type: 'string' }],
        });
        assert.equal(res.statusCode, 200, res.body);
      }
      // The change counters reach the statistics within a second.
      await within(5000, 'the creates counted', async () => {
        return (await tableStats('conversations')).n_mod_since_analyze >= CALLS;
      });

      const round = await keepUpStatistics(h.services.database);
      // On PostgreSQL autovacuum may have analysed it first; either way it has statistics now.
      if (backend === 'pglite') assert.ok(round.analyzed.includes('conversations'), JSON.stringify(round));
      assert.ok((await tableStats('conversations')).reltuples >= CALLS);
      assert.equal(await foreignKeyCheckIndex(), 'conversations_company_id_id_pk');

      // Nothing is due any more.
      const again = await keepUpStatistics(h.services.database);
      assert.ok(!again.analyzed.includes('conversations'), JSON.stringify(again));
    });

    it('vacuums the finished jobs on the embedded database, and leaves VACUUM to autovacuum on PostgreSQL', async () => {
      await h.runJobs();
      await within(5000, 'the deleted jobs counted', async () => {
        return (await tableStats('jobs')).n_dead_tup >= CALLS;
      });
      const round = await keepUpStatistics(h.services.database);
      if (backend === 'pglite') {
        assert.ok(round.vacuumed.includes('jobs'), JSON.stringify(round));
        await within(
          5000,
          'the dead jobs reclaimed',
          async () => (await tableStats('jobs')).n_dead_tup === 0,
        );
      } else {
        assert.deepEqual(round.vacuumed, []);
      }
    });
  });
}
