/**
 * The list's indexes (decision 23, issue 12): on a company with many calls, every single filter and a page
 * deep in the list are answered by an index, never a sequential scan of the company's calls or tags. The
 * plans are the database's own (EXPLAIN of exactly the query the list runs), with enable_seqscan left on.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { type CallFilter, listCallsQuery } from '../src/adapters/db/repositories/call-reads.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

for (const backend of BACKENDS) {
  // Enough rows that the planner prefers an index over a scan; fewer on the embedded database (slower to fill).
  const CALLS = backend === 'postgres' ? 60_000 : 15_000;
  describe(`GET /api/v1/calls query plans on ${CALLS} calls (${backend})`, () => {
    let h: Harness;
    let c: TestCompany;
    let quiet: { id: string };

    before(async () => {
      // Filling tens of thousands of rows takes longer than the service's statement timeout allows a request.
      h = await startHarness(backend, { DB_STATEMENT_TIMEOUT: '300' });
      c = await h.company();
      quiet = await c.addUser('plans-second@example.test');
      const other = await h.company();
      const db = h.services.database.db;
      // Two companies' calls, so a filter must also keep to the company; states, products, agents and
      // latest-upload statuses spread over the rows; a tag on every call and a rare one on a few.
      for (const company of [c, other]) {
        await db.execute(sql`insert into conversations
            (company_id, agent_user_id, conversation_id, product_id, start_time, state, latest_upload_status)
          select ${company.id}, case when i % 2 = 0 then ${company.agent.id}::uuid else ${company.admin.id}::uuid end,
            'c-' || i, ${company.productId}, 1700000000 + (i * 7919) % 5000000,
            (array['created','live','stopped'])[1 + i % 3],
            (array[null,'pending','uploaded','ready','rejected','expired'])[1 + i % 6]
          from generate_series(1, ${CALLS}) i`);
        await db.execute(sql`insert into conversation_tags (company_id, conversation_uuid, key, type, value)
          select company_id, id, 'sale_closed', 'boolean', to_jsonb((hashtext(id::text) % 2) = 0)
          from conversations where company_id = ${company.id}`);
        await db.execute(sql`insert into conversation_tags (company_id, conversation_uuid, key, type, value)
          select company_id, id, 'escalated', 'integer', to_jsonb(3)
          from conversations where company_id = ${company.id} and conversation_id like 'c-%00'`);
      }
      await db.execute(sql`analyze`);
    });
    after(() => h.close());

    async function plan(filter: CallFilter, deep = false): Promise<string> {
      const after = deep ? { startTime: 1702500000, id: 'ffffffff-ffff-4fff-bfff-ffffffffffff' } : undefined;
      const query = listCallsQuery(h.services.database.db, c.id, filter, after, 51).toSQL();
      const text = `explain ${query.sql}`;
      const database = h.services.database;
      const rows = database.pool
        ? (await database.pool.query(text, query.params)).rows
        : ((await database.pglite?.query(text, query.params))?.rows ?? []);
      return (rows as Record<string, string>[]).map((r) => r['QUERY PLAN']).join('\n');
    }

    // Each filter, and the index expected to serve it (tags: whichever the planner finds cheaper — the
    // list's order with a key probe per call for a common tag, the tag index for a rare one).
    const FILTERS: [string, CallFilter, RegExp][] = [
      ['no filter', {}, /conversations_list_idx/],
      ['an agent’s own calls', { agentUserIds: ['agent'] }, /conversations_agent_list_idx/],
      ['agent_email (an agent with no calls)', { agentUserIds: ['admin'] }, /conversations_agent_list_idx/],
      ['product_id', { productId: 0 }, /conversations_product_list_idx/],
      ['conversation_id', { conversationId: 'c-42' }, /conversations_company_conversation_idx/],
      ['state', { state: 'stopped' }, /conversations_state_list_idx/],
      ['start_time_gte', { startTimeGte: 1702000000 }, /conversations_list_idx/],
      ['start_time_lt', { startTimeLt: 1702000000 }, /conversations_list_idx/],
      ['media', { media: 'ready' }, /conversations_media_list_idx/],
      // A sixth of the calls here: the list's own index with a filter is as cheap as the media index.
      ['media=none', { media: 'none' }, /conversations_(media_)?list_idx/],
      ['tag KEY (common)', { tags: [{ key: 'sale_closed' }] }, /conversation_tags/],
      ['tag KEY:VALUE (common)', { tags: [{ key: 'sale_closed', value: 'true' }] }, /conversation_tags/],
      [
        'tag KEY:VALUE (rare)',
        { tags: [{ key: 'escalated', value: '3' }] },
        /conversation_tags_key_value_idx/,
      ],
    ];

    for (const [name, raw, index] of FILTERS) {
      for (const deep of [false, true]) {
        it(`${name}${deep ? ', a page deep in the list' : ''}: an index, no sequential scan`, async () => {
          const filter = { ...raw };
          if (filter.agentUserIds?.[0] === 'agent') filter.agentUserIds = [c.agent.id];
          if (filter.agentUserIds?.[0] === 'admin') filter.agentUserIds = [quiet.id];
          if ('productId' in filter) filter.productId = c.productId;
          const text = await plan(filter, deep);
          assert.doesNotMatch(text, /Seq Scan on (conversations|conversation_tags)/, text);
          assert.match(text, index, text);
          if (process.env.SHOW_PLANS) console.log(`-- ${name}${deep ? ' (deep)' : ''}\n${text}`);
        });
      }
    }
  });
}
