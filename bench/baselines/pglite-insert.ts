/** Baseline: the minimal insert route on PGlite, stored in DATA_DIR. */
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { CREATE_TABLE, INSERT, serveInsertRoute } from './insert-route.ts';

const db = await PGlite.create(join(process.env.DATA_DIR ?? '.', 'pglite'));
await db.query(CREATE_TABLE);
const app = await serveInsertRoute(async (json) => {
  await db.query(INSERT, [json]);
});
process.once('SIGTERM', async () => {
  await app.close();
  await db.close();
  process.exit(0);
});
