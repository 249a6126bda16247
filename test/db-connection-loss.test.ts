/**
 * Regression (found by the outage test): a PostgreSQL client checked out of the pool that loses its server
 * between two queries must not crash the process with an unhandled 'error' event.
 */
import assert from 'node:assert/strict';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { openDatabase } from '../src/adapters/db/database.ts';
import { createPostgresDatabase } from './helpers/harness.ts';

describe('PostgreSQL connection loss', { skip: !process.env.TEST_DATABASE_URL }, () => {
  it('survives the server going away under a checked-out client', async () => {
    const target = await createPostgresDatabase();
    const sockets = new Set<Socket>();
    const proxy = createServer((client) => {
      const upstream = connect(Number(new URL(target.url).port || 5432), new URL(target.url).hostname);
      sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const url = new URL(target.url);
    url.hostname = '127.0.0.1';
    url.port = String((proxy.address() as AddressInfo).port);
    const database = await openDatabase({ databaseUrl: url.toString(), dataDir: '/nonexistent' });
    try {
      const pool = database.pool;
      assert.ok(pool);
      const client = await pool.connect();
      await client.query('select 1');
      for (const s of sockets) s.destroy();
      await new Promise((r) => setTimeout(r, 300));
      await assert.rejects(client.query('select 1'));
      client.release(true);
      const ok = await pool.query('select 1 as one');
      assert.equal(ok.rows[0]?.one, 1);
    } finally {
      await database.close();
      await new Promise((r) => proxy.close(() => r(undefined)));
      await target.drop();
    }
  });
});
