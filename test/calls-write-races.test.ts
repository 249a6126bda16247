/**
 * Writes to a call racing its deletion or its stop, made deterministic by a gate: a BEFORE INSERT trigger
 * (on this test's own database) that waits on an advisory lock the test holds, so a request stops right
 * before its insert while the other one runs. A write to a call deleted meanwhile answers 404 (it answered
 * 500, the insert's foreign-key error), and a tag write's call.updated event carries the state its change
 * was made on (a stop that committed meanwhile left "live" after call.stopped in the log).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { settleEvents } from './helpers/events.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { type Harness, startHarness } from './helpers/harness.ts';
import { makeCall, type ReadKeys, readKeys } from './helpers/reads.ts';

const GATE = 424_242;

describe('call writes racing a DELETE or a stop (postgres)', { skip: !process.env.TEST_DATABASE_URL }, () => {
  let h: Harness;
  let admin: pg.Client;
  before(async () => {
    h = await startHarness('postgres');
    admin = new pg.Client({ connectionString: h.databaseUrl });
    await admin.connect();
    await admin.query(`
      create function test_gate() returns trigger language plpgsql as $$
      begin
        perform pg_advisory_xact_lock_shared(${GATE});
        return new;
      end $$;
      create trigger test_gate before insert on conversation_tags for each row execute function test_gate();
      create trigger test_gate before insert on call_handoffs for each row execute function test_gate();
    `);
  });
  after(async () => {
    await admin.end();
    await h.close();
  });

  /** Waits until `n` backends wait on a lock (the gate, or a row another transaction holds). */
  async function waitingOnLocks(n: number): Promise<void> {
    for (let i = 0; i < 400; i++) {
      const r = await admin.query(
        `select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`,
      );
      if (r.rows[0].n >= n) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`fewer than ${n} backends ever waited on a lock`);
  }

  async function setup(): Promise<{ c: TestCompany; keys: ReadKeys; id: string; name: string }> {
    const c = await h.company();
    const keys = await readKeys(c);
    const name = `race-${Math.random().toString(36).slice(2, 8)}`;
    const { id } = await makeCall(h, c, keys, { conversationId: name });
    return { c, keys, id, name };
  }

  /** Runs `first` up to the gate, then `second` until it is done or waits on `first`, then opens the gate. */
  async function race<T, U>(first: () => Promise<T>, second: () => Promise<U>): Promise<[T, U]> {
    await admin.query('select pg_advisory_lock($1)', [GATE]);
    try {
      const a = first();
      await waitingOnLocks(1);
      let secondDone = false;
      const b = second().finally(() => {
        secondDone = true;
      });
      // The second either completes (nothing of the first's locked it) or waits on the first's row lock.
      while (!secondDone) {
        const r = await admin.query(
          `select count(*)::int as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock'`,
        );
        if (r.rows[0].n >= 2) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await admin.query('select pg_advisory_unlock($1)', [GATE]);
      return await Promise.all([a, b]);
    } finally {
      await admin.query('select pg_advisory_unlock_all()');
    }
  }

  for (const which of ['add_tags', 'live sale', 'handoff create'] as const) {
    it(`answers ${which} on a call deleted meanwhile with 200 (before the deletion) or 404, never 500`, async () => {
      const { c, keys, id, name } = await setup();
      const write = () =>
        which === 'add_tags'
          ? h.request({
              method: 'POST',
              url: '/api/v1/call/add_tags',
              key: c.key,
              body: {
                agent_email: c.agent.email,
                conversation_id: name,
                tags: [{ key: 'k', type: 'string', value: 'v' }],
              },
            })
          : which === 'live sale'
            ? h.request({
                method: 'POST',
                url: `/api/v1/live/${name}/data/sale`,
                key: c.key,
                body: { closed: true },
              })
            : h.request({
                method: 'POST',
                url: '/api/v1/call-handoff',
                key: c.writerKey,
                body: { conversation_id: name, metadata: { a: 1 } },
              });
      const [res, del] = await race(write, () =>
        h.request({ method: 'DELETE', url: `/api/v1/calls/${id}`, key: keys.admin }),
      );
      assert.equal(del.statusCode, 204, del.body);
      assert.ok([200, 201, 404].includes(res.statusCode), `${res.statusCode} ${res.body}`);
    });
  }

  for (const which of ['add_tags', 'live sale'] as const) {
    it(`writes ${which}'s call.updated with the state its tag was stored on, when a stop races it`, async () => {
      const { c, name } = await setup();
      const events = (await c.addKey(c.admin.id, ['events:read'])).key;
      const call = { agent_email: c.agent.email, conversation_id: name };
      const started = await h.request({ method: 'POST', url: '/api/v1/call/start', key: c.key, body: call });
      assert.equal(started.statusCode, 200, started.body);
      const [tagged, stopped] = await race(
        () =>
          which === 'add_tags'
            ? h.request({
                method: 'POST',
                url: '/api/v1/call/add_tags',
                key: c.key,
                body: { ...call, tags: [{ key: 'k', type: 'string', value: 'v' }] },
              })
            : h.request({
                method: 'POST',
                url: `/api/v1/live/${name}/data/sale`,
                key: c.key,
                body: { closed: true },
              }),
        () => h.request({ method: 'POST', url: '/api/v1/call/stop', key: c.key, body: call }),
      );
      assert.equal(tagged.statusCode, 200, tagged.body);
      assert.equal(stopped.statusCode, 200, stopped.body);
      // Every event written so far served (a transaction elsewhere on the server can hold the feed back).
      await settleEvents(h);
      const feed = await h.request({ method: 'GET', url: '/api/v1/events?limit=1000', key: events });
      const log = (feed.json().events as { type: string; data: { state?: string } }[]).map(
        (e) => `${e.type}:${e.data.state}`,
      );
      assert.equal(log.at(-1), 'call.stopped:stopped', log.join(', '));
    });
  }

  it('erases a call while an earlier upload of it changes status, neither side deadlocked', async () => {
    const c = await h.company();
    const keys = await readKeys(c);
    const name = `erase-${Math.random().toString(36).slice(2, 8)}`;
    const { id } = await makeCall(h, c, keys, { conversationId: name, filename: 'a.wav' });
    await makeCall(h, c, keys, { conversationId: name, filename: 'b.wav' }); // the call's latest upload
    const first = await admin.query('select min(id) as id from uploads where company_id = $1', [c.id]);
    // As verification's transaction does: the upload's verdict, then its analysis row, whose foreign key
    // locks the call. Erasure locked the call, then the uploads: PostgreSQL aborted one side (a 500).
    const verifier = new pg.Client({ connectionString: h.databaseUrl });
    await verifier.connect();
    try {
      await verifier.query('begin');
      await verifier.query(`update uploads set status = 'uploaded' where company_id = $1 and id = $2`, [
        c.id,
        first.rows[0].id,
      ]);
      const erased = h.request({ method: 'DELETE', url: `/api/v1/calls/${id}`, key: keys.admin });
      await waitingOnLocks(1);
      await verifier.query(
        `insert into call_analyses (company_id, conversation_uuid, status, source, run_id, upload_id)
         values ($1, $2, 'pending', 'recording', gen_random_uuid(), $3)`,
        [c.id, id, first.rows[0].id],
      );
      await verifier.query('commit');
      const res = await erased;
      assert.equal(res.statusCode, 204, res.body);
      const gone = await h.request({ method: 'GET', url: `/api/v1/calls/${id}`, key: keys.admin });
      assert.equal(gone.statusCode, 404);
    } finally {
      await verifier.end();
    }
  });

  it('answers 503 with Retry-After when PostgreSQL aborts a write for a concurrent one (40P01, 40001)', async () => {
    const { c, name } = await setup();
    // A deadlock cannot be made on demand: a trigger of this test's database raises the SQLSTATE instead.
    await admin.query(`
      create function test_abort() returns trigger language plpgsql as $$
      begin
        if new.value #>> '{}' in ('40P01', '40001') then
          raise exception 'aborted' using errcode = new.value #>> '{}';
        end if;
        return new;
      end $$;
      create trigger test_abort before insert on conversation_tags for each row execute function test_abort();
    `);
    for (const code of ['40P01', '40001']) {
      const res = await h.request({
        method: 'POST',
        url: '/api/v1/call/add_tags',
        key: c.key,
        body: {
          agent_email: c.agent.email,
          conversation_id: name,
          tags: [{ key: 'k', type: 'string', value: code }],
        },
      });
      assert.equal(res.statusCode, 503, res.body);
      assert.ok(Number(res.headers['retry-after']) > 0);
    }
  });
});
