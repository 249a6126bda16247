/**
 * Opens the database: embedded PGlite in the data directory by default, or a PostgreSQL server through a
 * connection pool when DATABASE_URL is set. Both run the same migrations and the same queries.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { acquireDirectoryLock, type DirectoryLock } from './directory-lock.ts';
import * as schema from './schema.ts';

/** The query interface every repository takes: the database itself or a transaction of it. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

/** An open database. */
export interface Database {
  readonly kind: 'pglite' | 'postgres';
  readonly db: Db;
  /** Throws when the database cannot answer a trivial query. */
  ping(): Promise<void>;
  /** Applies every migration not applied yet; safe to call from several processes at once. */
  migrate(): Promise<void>;
  close(): Promise<void>;
  /** The embedded database itself, for the parts that need PGlite's own API (listen/notify). */
  readonly pglite?: PGlite;
  /** The connection pool, for the parts that need a dedicated PostgreSQL connection (LISTEN). */
  readonly pool?: pg.Pool;
}

const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../../migrations', import.meta.url));
/** Any fixed number: the advisory lock that serialises migrations of several processes. */
const MIGRATION_LOCK_ID = 7_416_302_551;

/** Where to find the database. */
export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  /** Size of the PostgreSQL connection pool. */
  poolSize?: number;
}

/** Opens (and for PGlite, locks) the database; does not migrate. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize ?? 10);
  return openPglite(join(options.dataDir, 'pglite'));
}

async function openPostgres(url: string, poolSize: number): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30000,
  });
  // An idle client that loses its server emits here; without a listener the process would crash.
  pool.on('error', () => {});
  // A checked-out client (inside a transaction, between two queries) that loses its server emits on the
  // client itself, where the pool listens no more: without this the process crashed on a database outage.
  // The next query on it fails, the request answers 503 and the pool discards the client.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  const db = drizzlePg(pool, { schema }) as unknown as Db;
  return {
    kind: 'postgres',
    db,
    pool,
    async ping() {
      await pool.query('select 1');
    },
    async migrate() {
      const client = await pool.connect();
      try {
        await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
        try {
          await migratePg(drizzlePg(client), { migrationsFolder: MIGRATIONS_FOLDER });
        } finally {
          await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
        }
      } finally {
        client.release();
      }
    },
    async close() {
      await pool.end();
    },
  };
}

async function openPglite(dir: string): Promise<Database> {
  mkdirSync(dir, { recursive: true });
  const lock: DirectoryLock = acquireDirectoryLock(dir);
  let client: PGlite;
  try {
    client = await PGlite.create(dir);
  } catch (error) {
    lock.release();
    throw error;
  }
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  return {
    kind: 'pglite',
    db,
    pglite: client,
    async ping() {
      await db.execute(sql`select 1`);
    },
    async migrate() {
      await migratePglite(drizzlePglite(client), { migrationsFolder: MIGRATIONS_FOLDER });
    },
    async close() {
      try {
        await client.close();
      } finally {
        lock.release();
      }
    },
  };
}
