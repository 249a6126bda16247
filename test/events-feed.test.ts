/**
 * GET /api/v1/events (decision 27): who may read it, its parameters, retention, and the cursor that never
 * skips an event while many writers, some slow, commit concurrently.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { and, asc, eq, sql } from 'drizzle-orm';
import { purgeOldEvents } from '../src/adapters/db/repositories/events.ts';
import { events } from '../src/adapters/db/schema.ts';
import type { Principal } from '../src/domain/access/principal.ts';
import { GoneError } from '../src/domain/errors.ts';
import { readEvents } from '../src/domain/events/feed.ts';
import { recordEvent } from '../src/domain/events/record.ts';
import { post } from './helpers/calls.ts';
import { settleEvents } from './helpers/events.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

for (const backend of BACKENDS) {
  describe(`the event feed (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    async function readerKey(c: TestCompany) {
      return (await c.addKey(c.admin.id, ['events:read'])).key;
    }

    /** Reads a page once everything written so far is served. */
    async function get(key: string, query = '') {
      await settleEvents(h);
      return h.request({ method: 'GET', url: `/api/v1/events${query}`, key });
    }

    async function createCall(c: TestCompany, conversationId: string) {
      const res = await post(h, c, '/api/v1/call/create', {
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: conversationId,
      });
      assert.equal(res.statusCode, 200, res.body);
    }

    it('needs the events:read scope and a key of an admin', async () => {
      const c = await h.company();
      assert.equal((await get(c.key)).statusCode, 403, 'the calls scope grants nothing here');
      const agentKey = (await c.addKey(c.agent.id, ['events:read'])).key;
      const res = await get(agentKey);
      assert.equal(res.statusCode, 403, res.body);
      assert.equal((await get(await readerKey(c))).statusCode, 200);
    });

    it('pages in order with a cursor that is never null, filters by type, and shows only its company', async () => {
      const c = await h.company();
      const other = await h.company();
      const key = await readerKey(c);
      const empty = (await get(key)).json();
      assert.deepEqual(empty.events, []);
      assert.equal(typeof empty.next_cursor, 'string');
      for (const id of ['a', 'b', 'c']) await createCall(c, id);
      await createCall(other, 'x');
      await post(h, c, '/api/v1/call/start', { agent_email: c.agent.email, conversation_id: 'b' });
      const first = (await get(key, '?limit=2')).json();
      assert.deepEqual(
        first.events.map((e: { data: { conversation_id: string } }) => e.data.conversation_id),
        ['a', 'b'],
      );
      for (const e of first.events) {
        assert.deepEqual(Object.keys(e).sort(), ['created_at', 'data', 'id', 'type']);
        assert.match(e.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      }
      const second = (await get(key, `?limit=2&after=${first.next_cursor}`)).json();
      assert.deepEqual(
        second.events.map((e: { type: string; data: { conversation_id: string } }) => [
          e.type,
          e.data.conversation_id,
        ]),
        [
          ['call.created', 'c'],
          ['call.started', 'b'],
        ],
      );
      const third = (await get(key, `?after=${second.next_cursor}`)).json();
      assert.deepEqual(third.events, []);
      assert.equal(typeof third.next_cursor, 'string', 'an empty page still has a cursor to poll with');
      await createCall(c, 'd');
      const fourth = (await get(key, `?after=${third.next_cursor}`)).json();
      assert.deepEqual(
        fourth.events.map((e: { data: { conversation_id: string } }) => e.data.conversation_id),
        ['d'],
      );
      const started = (await get(key, '?type=call.started&type=call.stopped')).json();
      assert.deepEqual(
        started.events.map((e: { type: string }) => e.type),
        ['call.started'],
      );
      const one = (await get(key, '?type=call.started')).json();
      assert.equal(one.events.length, 1);
    });

    it('answers 422 for an unknown parameter or type, a malformed cursor or a limit out of range', async () => {
      const c = await h.company();
      const key = await readerKey(c);
      for (const query of [
        '?since=1',
        '?type=call.exploded',
        '?after=nonsense',
        `?after=${Buffer.from('e1.12.x').toString('base64url')}`,
        '?after=',
        '?limit=0',
        '?limit=1001',
        '?limit=ten',
        // Numbers the schema alone would convert loosely.
        '?limit=1.5',
        '?limit=0x2',
        '?limit=+2',
        '?limit=%202',
        '?limit=1e0',
        '?limit=1&limit=2',
      ]) {
        const res = await get(key, query);
        assert.equal(res.statusCode, 422, `${query}: ${res.body}`);
        assert.equal(typeof res.json().error, 'string');
      }
      // Named as the schema's own errors name the parameter, and said as the calls list says it.
      const malformed = await get(key, '?after=nonsense');
      assert.equal(malformed.json().error, 'query.after: is not a cursor this service made');
    });

    /** A company with calls `<prefix>-1` and `<prefix>-2` whose events are 40 days old, then `kept`, and a cursor after the first. */
    async function pastRetention(prefix: string) {
      const c = await h.company();
      const key = await readerKey(c);
      await createCall(c, `${prefix}-1`);
      const early = (await get(key, '?limit=1')).json() as { next_cursor: string };
      await createCall(c, `${prefix}-2`);
      await createCall(c, 'kept');
      await h.services.database.db
        .update(events)
        .set({ createdAt: sql`now() - interval '40 days'` })
        .where(
          and(eq(events.companyId, c.id), sql`${events.data}->>'conversation_id' like ${`${prefix}-%`}`),
        );
      return { c, key, early };
    }

    it('answers 410 for a cursor older than the oldest kept event, and starts after the purge without one', async () => {
      const { key, early } = await pastRetention('old');
      const db = h.services.database.db;
      assert.ok((await purgeOldEvents(db, 30, 1000)) >= 2);
      const gone = await get(key, `?after=${early.next_cursor}`);
      assert.equal(gone.statusCode, 410, gone.body);
      const fresh = (await get(key)).json();
      assert.deepEqual(
        fresh.events.map((e: { data: { conversation_id: string } }) => e.data.conversation_id),
        ['kept'],
      );
    });

    it('keeps events EVENT_RETENTION_DAYS of 86,400 s, whatever the time zone of the session', async () => {
      const c = await h.company();
      await createCall(c, 'zone-kept');
      const db = h.services.database.db;
      // Half an hour younger than 30 days.
      await db
        .update(events)
        .set({ createdAt: sql`now() - make_interval(secs => ${30 * 86_400 - 1800})` })
        .where(eq(events.companyId, c.id));
      // A zone whose summer time began ten days ago (a POSIX rule by day of the year, February 29 not
      // counted): 30 calendar days before now are 29 days and 23 hours, and the event went an hour early.
      const dayOfYear = (daysFromNow: number) => {
        const d = new Date(Date.now() + daysFromNow * 86_400_000);
        const before = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334][d.getUTCMonth()] ?? 0;
        return before + d.getUTCDate();
      };
      const zone = `AAA0BBB,J${dayOfYear(-10)}/0,J${dayOfYear(100)}/0`;
      await db.transaction(async (tx) => {
        await tx.execute(sql.raw(`set local timezone = '${zone}'`));
        await purgeOldEvents(tx, 30, 100_000);
      });
      const left = await db.select({ id: events.id }).from(events).where(eq(events.companyId, c.id));
      assert.equal(left.length, 1);
    });

    it('answers 410, not a page that skipped them, when a purge commits while the page is read', async () => {
      const { c, early } = await pastRetention('racing-old');
      const db = h.services.database.db;
      await settleEvents(h);
      // The purge commits just before the feed's page is read (its one raw statement), after any earlier read.
      let purged = 0;
      const racing = new Proxy(db, {
        get(target, property, receiver) {
          if (property !== 'execute') return Reflect.get(target, property, receiver);
          return async (...args: Parameters<typeof db.execute>) => {
            if (purged === 0) purged = await purgeOldEvents(db, 30, 1000);
            return target.execute(...args);
          };
        },
      });
      const principal = { companyId: c.id } as Principal;
      await assert.rejects(
        readEvents(racing, principal, { after: early.next_cursor, limit: 100, types: [] }),
        (error: unknown) => error instanceof GoneError,
      );
      assert.ok(purged >= 1);
    });

    it('never skips an event while many writers, some slow, commit concurrently', async () => {
      const c = await h.company();
      const key = await readerKey(c);
      const db = h.services.database.db;
      const writers = 12;
      const perWriter = 15;
      let done = false;
      const committed: string[] = [];
      const write = async (writer: number) => {
        for (let i = 0; i < perWriter; i++) {
          const label = `${writer}-${i}`;
          const slow = writer % 3 === 0;
          const rollback = i % 7 === 3;
          try {
            await db.transaction(async (tx) => {
              await recordEvent(tx, c.id, 'call.updated', { call_id: label });
              // A slow writer takes its transaction id first and commits long after faster ones.
              if (slow) await sleep(30 + ((writer * 7 + i * 13) % 90));
              await recordEvent(tx, c.id, 'call.stopped', { call_id: label });
              if (rollback) throw new Error('rolled back');
            });
            committed.push(label);
          } catch (error) {
            if (!(error instanceof Error && error.message === 'rolled back')) throw error;
          }
          if (!slow) await sleep(1);
        }
      };
      const read: { label: string; type: string }[] = [];
      let pages = 0;
      const reader = (async () => {
        let cursor: string | undefined;
        const deadline = Date.now() + 30_000;
        for (;;) {
          const url = `/api/v1/events?limit=7${cursor ? `&after=${cursor}` : ''}`;
          const res = await h.request({ method: 'GET', url, key });
          assert.equal(res.statusCode, 200, res.body);
          const page = res.json();
          pages++;
          for (const e of page.events) read.push({ label: e.data.call_id, type: e.type });
          cursor = page.next_cursor;
          if (done && page.events.length === 0 && read.length >= committed.length * 2) return;
          assert.ok(
            Date.now() < deadline,
            `the reader did not catch up: ${read.length} of ${committed.length * 2}`,
          );
          if (page.events.length === 0) await sleep(5);
        }
      })();
      await Promise.all(Array.from({ length: writers }, (_, w) => write(w)));
      done = true;
      await reader;
      const expected = await db
        .select({ label: sql<string>`${events.data}->>'call_id'`, type: events.type })
        .from(events)
        .where(eq(events.companyId, c.id))
        .orderBy(asc(events.txid), asc(events.seq));
      assert.equal(committed.length, writers * (perWriter - 2), 'two of every 15 transactions rolled back');
      assert.equal(expected.length, committed.length * 2, 'rolled-back transactions left no event');
      assert.deepEqual(read, expected, 'every committed event read exactly once, in log order');
      const labels = read.map((e) => e.label);
      for (let i = 0; i < labels.length; i += 2) {
        assert.equal(labels[i], labels[i + 1], "a transaction's events are contiguous");
      }
      assert.ok(pages > 5);
    });
  });
}
