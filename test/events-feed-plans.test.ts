/**
 * The event feed's indexes (issue 16): on a company with many events, a page of the whole log, a page deep
 * in it, and a page of one type are read from an index in log order, never by a sequential scan of the
 * log; a type no event has is answered from the type's own index entries. The plans are the database's
 * own (EXPLAIN of exactly the statement the feed runs), with enable_seqscan left on. And where the type
 * index serves a filter of two types, a reader that follows `next_cursor` still gets each event once, in
 * log order (decision 27).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../src/adapters/db/prepared.ts';
import { listEventsQuery, type Position } from '../src/adapters/db/repositories/events.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

for (const backend of BACKENDS) {
  // Enough rows that the planner prefers an index over a scan; fewer on the embedded database (slower to fill).
  const EVENTS = backend === 'postgres' ? 60_000 : 20_000;
  describe(`GET /api/v1/events query plans on ${EVENTS} events (${backend})`, () => {
    let h: Harness;
    let c: TestCompany;

    before(async () => {
      h = await startHarness(backend, { DB_STATEMENT_TIMEOUT: '300' });
      c = await h.company();
      const other = await h.company();
      const db = h.services.database.db;
      // Two companies' events, so the feed must also keep to the company: two common types in turn, and
      // one event in a thousand of each of two rare ones.
      for (const company of [c, other]) {
        await db.execute(sql`insert into events (company_id, type, data)
          select ${company.id}, case when i % 1000 = 0 then 'call.deleted'
                                      when i % 1000 = 500 then 'upload.expired'
                                      when i % 2 = 0 then 'analysis.ready' else 'call.created' end,
                 jsonb_build_object('call_id', gen_random_uuid())
          from generate_series(1, ${EVENTS}) i`);
      }
      await db.execute(sql`analyze events`);
    });
    after(() => h.close());

    async function plan(types: string[], from: Position = { txid: '0', seq: 0 }): Promise<string> {
      const result = await h.services.database.db.execute(
        sql`explain ${listEventsQuery(c.id, from, { limit: 100, types })}`,
      );
      return rowsOf<Record<string, string>>(result)
        .map((r) => r['QUERY PLAN'])
        .join('\n');
    }

    async function deepPosition(): Promise<Position> {
      const result = await h.services.database.db.execute(sql`select txid::text as txid, seq::int as seq
        from events where company_id = ${c.id} order by txid, seq offset ${Math.floor(EVENTS * 0.9)} limit 1`);
      const [row] = rowsOf<Position>(result);
      assert.ok(row);
      return { txid: String(row.txid), seq: Number(row.seq) };
    }

    // Each page, and the index expected to serve it.
    const PAGES: [string, string[], RegExp][] = [
      ['every type', [], /events_(company_)?position_idx/],
      ['a rare type (0.1 % of the events)', ['call.deleted'], /events_company_type_position_idx/],
      ['a type no event has', ['webhook.disabled'], /events_company_type_position_idx/],
      ['two rare types', ['webhook.disabled', 'call.deleted'], /events_company_type_position_idx/],
      ['a common type', ['call.created'], /events_company_(type_)?position_idx|events_position_idx/],
    ];

    for (const [name, types, index] of PAGES) {
      it(`a page of ${name} reads an index, not the whole log`, async () => {
        const text = await plan(types);
        assert.match(text, index, text);
        assert.doesNotMatch(text, /Seq Scan on events/, text);
      });
    }

    it('a page 90 % deep reads the same index as the first', async () => {
      const from = await deepPosition();
      for (const [, types, index] of PAGES) {
        const text = await plan(types, from);
        assert.match(text, index, text);
        assert.doesNotMatch(text, /Seq Scan on events/, text);
      }
    });

    it('a reader following next_cursor with two rare types gets each of their events once, in log order', async () => {
      const types = ['call.deleted', 'upload.expired'];
      const key = (await c.addKey(c.admin.id, ['events:read'])).key;
      const query = types.map((t) => `&type=${t}`).join('');
      const read: string[] = [];
      let cursor = '';
      for (let page = 0; page < 100; page++) {
        const res = await h.request({ method: 'GET', url: `/api/v1/events?limit=7${query}${cursor}`, key });
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json() as { events: { id: string; type: string }[]; next_cursor: string };
        for (const e of body.events) assert.ok(types.includes(e.type), e.type);
        read.push(...body.events.map((e) => e.id));
        if (body.events.length === 0) break;
        cursor = `&after=${body.next_cursor}`;
      }
      const expected = rowsOf<{ id: string }>(
        await h.services.database.db.execute(sql`select id::text as id from events
          where company_id = ${c.id} and type in ${types} order by txid, seq`),
      ).map((r) => r.id);
      assert.equal(expected.length, (EVENTS / 1000) * 2);
      assert.deepEqual(read, expected);
    });
  });
}
