/** Chooses the change notifier that fits the database. */
import type { Database } from '../db/database.ts';
import type { ChangeNotifier } from './notifier.ts';
import { createPgNotifier, type PgNotifierOptions } from './pg-notifier.ts';
import { createPgliteNotifier } from './pglite-notifier.ts';

/** LISTEN on a dedicated connection for PostgreSQL; PGlite's own listen for the embedded database. */
export function createChangeNotifier(
  database: Database,
  databaseUrl: string | undefined,
  options: PgNotifierOptions,
): ChangeNotifier {
  if (database.kind === 'pglite') {
    if (!database.pglite) throw new Error('embedded database without its PGlite handle');
    return createPgliteNotifier(database.pglite);
  }
  if (!databaseUrl) throw new Error('PostgreSQL change notifications need DATABASE_URL');
  return createPgNotifier(databaseUrl, options);
}
