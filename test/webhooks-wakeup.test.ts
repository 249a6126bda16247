/**
 * The fan-out's wake-up on PostgreSQL (migration 0017): of concurrent transactions that write events only
 * one notifies, so a commit that did not notify must still be delivered promptly, not at the next poll.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { BOOTSTRAP_LOCK_ID, EVENTS_NOTIFY_LOCK_ID } from '../src/adapters/db/advisory-locks.ts';
import { addWebhookEndpoint } from './helpers/events.ts';
import { type Harness, startHarness } from './helpers/harness.ts';
import { type Receiver, startReceiver } from './helpers/receiver.ts';

describe('webhook wake-ups (postgres)', { skip: !process.env.TEST_DATABASE_URL }, () => {
  let h: Harness;
  let receiver: Receiver;
  before(async () => {
    // A poll a minute apart: only wake-ups deliver within the test.
    h = await startHarness(
      'postgres',
      { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_INTERVAL: '60000', WORKER_POLL_INTERVAL: '50' },
      { worker: true },
    );
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await h.close();
  });

  it('delivers the events of a commit that ran beside the notifying one, without waiting for the poll', async () => {
    const c = await h.company();
    await addWebhookEndpoint(h, c, { url: receiver.url });
    // Let the start-up poll pass, so that only wake-ups remain.
    await sleep(300);
    const first = new pg.Client({ connectionString: h.databaseUrl });
    const second = new pg.Client({ connectionString: h.databaseUrl });
    await first.connect();
    await second.connect();
    try {
      const write = (client: pg.Client, n: number) =>
        client.query(`insert into events (company_id, type, data) values ($1, 'call.updated', $2::jsonb)`, [
          c.id,
          JSON.stringify({ n }),
        ]);
      await first.query('begin');
      await write(first, 1); // takes the wake-up
      await second.query('begin');
      await write(second, 2); // finds it taken: sends none
      const start = Date.now();
      await first.query('commit');
      await sleep(120);
      await second.query('commit');
      await receiver.waitFor((r) => r.length >= 2, 5000);
      assert.deepEqual(receiver.received.map((r) => r.json.data.n).sort(), [1, 2]);
      assert.ok(Date.now() - start < 5000);
    } finally {
      await first.end();
      await second.end();
    }
  });
  it('takes, in the events trigger, the lock id that advisory-locks.ts names for it', async () => {
    // SQL cannot import the constant: the migration writes the number, and this holds the two together.
    const client = new pg.Client({ connectionString: h.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query(`select pg_get_functiondef('events_notify'::regproc) as def`);
      assert.match(
        String(rows[0]?.def),
        new RegExp(`pg_try_advisory_xact_lock\\(${EVENTS_NOTIFY_LOCK_ID}\\)`),
      );
    } finally {
      await client.end();
    }
  });

  it('delivers an event written while a process bootstraps without waiting for the poll (their locks differ)', async () => {
    const c = await h.company();
    await addWebhookEndpoint(h, c, { url: receiver.url, types: ['call.updated'] });
    await sleep(300);
    const seen = receiver.received.length;
    const bootstrapping = new pg.Client({ connectionString: h.databaseUrl });
    const writer = new pg.Client({ connectionString: h.databaseUrl });
    await bootstrapping.connect();
    await writer.connect();
    try {
      await bootstrapping.query('begin');
      await bootstrapping.query('select pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK_ID]);
      await writer.query(
        `insert into events (company_id, type, data) values ($1, 'call.updated', '{"n": 4}')`,
        [c.id],
      );
      await receiver.waitFor((r) => r.length > seen, 5000);
      assert.equal(receiver.received.at(-1)?.json.data.n, 4);
    } finally {
      await bootstrapping.query('rollback');
      await bootstrapping.end();
      await writer.end();
    }
  });

  it('delivers events held back by a long transaction of another database soon after it ends, not at the poll', async () => {
    const c = await h.company();
    await addWebhookEndpoint(h, c, { url: receiver.url, types: ['call.updated'] });
    await sleep(300);
    const seen = receiver.received.length;
    // Transaction ids are the cluster's: an open one anywhere keeps newer events from being final.
    const blocker = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    const writer = new pg.Client({ connectionString: h.databaseUrl });
    await blocker.connect();
    await writer.connect();
    try {
      await blocker.query('begin');
      await blocker.query('select pg_current_xact_id()');
      await writer.query(
        `insert into events (company_id, type, data) values ($1, 'call.updated', '{"n": 3}')`,
        [c.id],
      );
      // Well past the wake-up's tail: only a run that looks again can find the event final.
      await sleep(1000);
      assert.equal(receiver.received.length, seen, 'nothing is delivered while the event is not final');
      await blocker.query('commit');
      // Within about a second when nothing else runs; the bound leaves room for other tests' transactions on
      // the same server, and is still far below the 60 s poll that delivered it before.
      await receiver.waitFor((r) => r.length > seen, 10_000);
      assert.equal(receiver.received.at(-1)?.json.data.n, 3);
    } finally {
      await blocker.end();
      await writer.end();
    }
  });
});
