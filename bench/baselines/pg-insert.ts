/** Baseline: the minimal insert route on PostgreSQL (DATABASE_URL) through a `pg` pool of 10. */
import pg from 'pg';
import { CREATE_TABLE, INSERT, serveInsertRoute } from './insert-route.ts';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
await pool.query(CREATE_TABLE);
const app = await serveInsertRoute(async (json) => {
  await pool.query(INSERT, [json]);
});
process.once('SIGTERM', async () => {
  await app.close();
  await pool.end();
  process.exit(0);
});
