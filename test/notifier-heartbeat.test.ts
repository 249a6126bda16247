/**
 * A change listener whose connection goes silent (a firewall or NAT dropping the one connection that only
 * listens; the pool stays healthy) raises no error for hours. Its heartbeat finds it: the process counts
 * it as lost, empties its caches, and listens again, so a key revoked and a final handoff record erased
 * through another process meanwhile are obeyed within two heartbeats, not after the principal cache's
 * 60 s backstop (and, for the record, not never).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../src/adapters/db/prepared.ts';
import { revokeKey } from '../src/domain/access/provisioning.ts';
import { within } from './helpers/eventually.ts';
import { createRecord, finalizeRecord } from './helpers/handoffs.ts';
import { type Harness, startHarness } from './helpers/harness.ts';
import { freePort } from './helpers/process.ts';
import { makeCall, readKeys } from './helpers/reads.ts';
import { tcpProxy } from './helpers/tcp-proxy.ts';

describe('change listener gone silent (postgres)', { skip: !process.env.TEST_DATABASE_URL }, () => {
  let a: Harness;
  let b: Harness;
  let proxy: ReturnType<typeof tcpProxy>;
  before(async () => {
    a = await startHarness('postgres');
    const port = await freePort();
    proxy = tcpProxy(port, Number(new URL(a.databaseUrl as string).port || 5432));
    await proxy.open();
    const url = new URL(a.databaseUrl as string);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    b = await startHarness(
      'postgres',
      { DATABASE_URL: url.toString(), DB_LISTEN_HEARTBEAT: '1' },
      { shareDatabaseOf: a },
    );
  });
  after(async () => {
    await b?.close();
    await a?.close();
    await proxy?.cut();
  });

  it('obeys a revoked key and an erased final record within two heartbeats, and listens again', async () => {
    const c = await a.company();
    const keys = await readKeys(c);
    const call = await makeCall(a, c, keys, { conversationId: 'silent-listener' });
    const record = await createRecord(a, c, { conversation_id: 'silent-listener' });
    assert.equal((await finalizeRecord(a, c, record.id)).statusCode, 200);
    const k = await c.addKey(c.admin.id, ['calls']);
    const readOnB = (key: string) =>
      b.request({ method: 'GET', url: `/api/v1/call-handoff/${record.id}`, key });
    // The setup's own notices may still empty b's caches: read until both the key and the record stay.
    await within(
      2000,
      'b caches the key and the final record',
      async () =>
        (await readOnB(k.key)).statusCode === 200 &&
        b.services.principalCache.peek(k.key) !== undefined &&
        b.services.handoffCache.get(`${c.id}:${record.id}`) !== undefined,
    );

    // b's listening connection, found by its port on the proxy's side, goes silent; nothing else of b's does.
    const listeners = rowsOf<{ port: number }>(
      await a.services.database.db.execute(
        sql`select client_port as port from pg_stat_activity
          where datname = current_database() and query ilike 'listen%'`,
      ),
    );
    assert.equal(listeners.filter((l) => proxy.silence(Number(l.port))).length, 1, "b's listener silenced");

    assert.equal(
      (await a.request({ method: 'DELETE', url: `/api/v1/calls/${call.id}`, key: keys.admin })).statusCode,
      204,
    );
    await revokeKey(a.services.database.db, c.id, k.id);
    const start = Date.now();
    await within(5000, 'b refuses the revoked key', async () => (await readOnB(k.key)).statusCode === 401);
    await within(
      5000,
      'b no longer serves the erased record',
      async () => (await readOnB(c.key)).statusCode === 404,
    );
    const took = Date.now() - start;
    assert.ok(took < 5000, `obeyed after ${took} ms`);
    await within(5000, 'b listens again', () => b.services.notifier.listening);
  });
});
