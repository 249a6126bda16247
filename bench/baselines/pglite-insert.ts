/**
 * Baseline: the minimal insert route on PGlite, stored in DATA_DIR. PGlite's default shared_buffers
 * (128 MB) are kept, while the service runs PGlite with shared_buffers=16MB (for its memory bound): the
 * baseline gets more buffer cache than the service, so the create ratio on the embedded database
 * understates the service (left so, as the target was set against this baseline).
 */
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
