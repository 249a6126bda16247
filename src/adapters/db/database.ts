/**
 * Opens the database: embedded PGlite in the data directory by default, or a PostgreSQL server through a
 * connection pool when DATABASE_URL is set. Both run the same migrations and the same queries.
 */

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite, PGliteOptions } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { DATABASE_DEFAULTS } from '../../config/config.ts';
import { observingAccessWrites } from './access-writes.ts';
import { MIGRATION_LOCK_ID } from './advisory-locks.ts';
import { acquireDirectoryLock, type DirectoryLock } from './directory-lock.ts';
import { translatingErrors } from './error-translation.ts';
import { beginOpen, makeTemplate, templateFor } from './pglite-template.ts';
import { registerDriver } from './prepared.ts';
import * as schema from './schema.ts';
import { driverSocket, socketOf } from './whole-message-socket.ts';

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
  /**
   * Calls `listener` after this process writes a table authentication reads (keys, users, products,
   * grants), and again when such a write commits; returns the function that stops it.
   */
  onAccessWrite(listener: () => void): () => void;
}

/** Listeners of this process's access writes. */
function accessWriteListeners(): { emit(): void; add(listener: () => void): () => void } {
  const listeners = new Set<() => void>();
  return {
    emit() {
      for (const listener of listeners) listener();
    },
    add(listener) {
      const entry = () => listener();
      listeners.add(entry);
      return () => listeners.delete(entry);
    },
  };
}

const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../../migrations', import.meta.url));

/** Where to find the database. */
export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  /** Size of the PostgreSQL connection pool. */
  poolSize?: number;
  /** PostgreSQL time limits (milliseconds); see `DatabaseTimeouts`. */
  timeouts?: DatabaseTimeouts;
}

/**
 * Time limits of PostgreSQL connections, so a database that stops answering (traffic paused, sockets open)
 * fails requests within `connectMs + statementMs` instead of hanging them.
 */
export interface DatabaseTimeouts {
  /** Connecting a new connection, and waiting for a free one in the pool. */
  connectMs: number;
  /** One statement: the server cancels it (statement_timeout) and the client drops a connection that stays silent. */
  statementMs: number;
  /** A transaction left idle on the server (idle_in_transaction_session_timeout). */
  idleInTransactionMs: number;
}

/** The limits when none are given: the defaults of DB_CONNECT_TIMEOUT, DB_STATEMENT_TIMEOUT, …. */
const DEFAULT_DATABASE_TIMEOUTS: DatabaseTimeouts = {
  connectMs: DATABASE_DEFAULTS.connectSeconds * 1000,
  statementMs: DATABASE_DEFAULTS.statementSeconds * 1000,
  idleInTransactionMs: DATABASE_DEFAULTS.idleInTransactionSeconds * 1000,
};

/** Opens (and for PGlite, locks) the database; does not migrate. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    return openPostgres(
      options.databaseUrl,
      options.poolSize ?? DATABASE_DEFAULTS.poolSize,
      options.timeouts ?? DEFAULT_DATABASE_TIMEOUTS,
    );
  }
  return openPglite(join(options.dataDir, 'pglite'));
}

/** Clients whose statements the watchdog leaves alone (the migration client: migrations may be long). */
const UNWATCHED = new WeakSet<object>();

/**
 * Drops the connection of a statement that has had no answer after `ms`: the server-side statement_timeout
 * cannot help when the server's traffic is paused, and a connection stuck on a silent socket would hang
 * every later query on it. Its query fails at once ("Connection terminated"), the request answers 503 and
 * the pool discards the client.
 */
function watchStatements(client: pg.PoolClient, ms: number): void {
  const query = client.query as (...args: unknown[]) => unknown;
  const stream = socketOf(client);
  (client as { query: unknown }).query = (...args: unknown[]): unknown => {
    if (UNWATCHED.has(client) || !stream) return query.apply(client, args);
    const timer = setTimeout(() => stream.destroy(), ms);
    const settle = () => clearTimeout(timer);
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (...result: unknown[]) => {
        settle();
        return (callback as (...r: unknown[]) => unknown)(...result);
      };
    }
    const result = query.apply(client, args);
    if (typeof callback !== 'function') {
      if (typeof (result as { then?: unknown } | null)?.then === 'function') {
        (result as Promise<unknown>).then(settle, settle);
      } else settle();
    }
    return result;
  };
}

async function openPostgres(url: string, poolSize: number, timeouts: DatabaseTimeouts): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    // pg-pool uses it for a new connection and for a wait for a free one.
    connectionTimeoutMillis: timeouts.connectMs,
    idleTimeoutMillis: 30000,
    keepAlive: true,
    stream: driverSocket,
    statement_timeout: timeouts.statementMs,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
  });
  // An idle client that loses its server emits here; without a listener the process would crash.
  pool.on('error', () => {});
  // A checked-out client (inside a transaction, between two queries) that loses its server emits on the
  // client itself, where the pool listens no more: without this the process crashed on a database outage.
  // The next query on it fails, the request answers 503 and the pool discards the client.
  pool.on('connect', (client) => {
    client.on('error', () => {});
    watchStatements(client, timeouts.statementMs);
  });
  const accessWrites = accessWriteListeners();
  const client = translatingErrors(observingAccessWrites(pool, accessWrites.emit));
  const db = drizzlePg({ client, schema }) as unknown as Db;
  registerDriver(db, 'postgres', client);
  return {
    kind: 'postgres',
    db,
    pool,
    onAccessWrite: accessWrites.add,
    async ping() {
      await pool.query('select 1');
    },
    async migrate() {
      const client = await pool.connect();
      UNWATCHED.add(client);
      try {
        await client.query('set statement_timeout = 0');
        await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
        try {
          await migratePg(drizzlePg(client), { migrationsFolder: MIGRATIONS_FOLDER });
        } finally {
          await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
        }
      } finally {
        // Not reused: its statement_timeout was lifted, and the watchdog ignores it.
        client.release(true);
      }
    },
    async close() {
      await pool.end();
    },
  };
}

/**
 * PostgreSQL's settings for the embedded database, which lives in this process's memory: shared_buffers
 * is 128 MB by default (the whole of it becomes resident as pages are read); 16 MB holds a small company's
 * working set, and the operating system's page cache holds the rest of the files.
 */
const PGLITE_SETTINGS = ['shared_buffers=16MB'];

/** PGlite's options for the embedded database, new or existing. */
async function pgliteOptions(): Promise<PGliteOptions> {
  const { PGlite } = await import('@electric-sql/pglite');
  // Given on the command line (PGlite's `postgresqlconf` would replace initdb's postgresql.conf).
  const settings = PGLITE_SETTINGS.flatMap((setting) => ['-c', setting]);
  return { startParams: [...PGlite.defaultStartParams, ...settings] };
}

/** Makes the archive a first embedded start loads instead of running initdb (see pglite-template.ts). */
export async function makeEmbeddedTemplate(force = false): Promise<string> {
  const { PGlite } = await import('@electric-sql/pglite');
  return makeTemplate((dir, options) => PGlite.create(dir, options), await pgliteOptions(), force);
}

async function openPglite(dir: string): Promise<Database> {
  mkdirSync(dir, { recursive: true });
  const lock: DirectoryLock = acquireDirectoryLock(dir);
  // The embedded database's code is loaded only by a process that opens it (not on PostgreSQL).
  const { PGlite } = await import('@electric-sql/pglite');
  const { drizzle: drizzlePglite } = await import('drizzle-orm/pglite');
  const { migrate: migratePglite } = await import('drizzle-orm/pglite/migrator');
  let client: PGlite;
  try {
    const opening = beginOpen(dir);
    const loadDataDir = templateFor(dir);
    client = await PGlite.create(dir, {
      ...(await pgliteOptions()),
      ...(loadDataDir ? { loadDataDir } : {}),
    });
    opening.done();
  } catch (error) {
    lock.release();
    throw error;
  }
  const accessWrites = accessWriteListeners();
  const wrapped = translatingErrors(observingAccessWrites(client, accessWrites.emit));
  const db = drizzlePglite({ client: wrapped, schema }) as unknown as Db;
  registerDriver(db, 'pglite', wrapped);
  return {
    kind: 'pglite',
    db,
    pglite: client,
    onAccessWrite: accessWrites.add,
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
