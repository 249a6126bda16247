/** Throw-away PostgreSQL databases on the bench's server, and the server's version. */
import pg from 'pg';
import { deferCleanup } from './cleanup.ts';

/** A database made for one part of the run; `drop` removes it. */
export interface ScratchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** Runs `work` with a client connected to `url`, and ends the connection whatever happens. */
export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates `cqs_bench_<random>` on the server of `adminUrl`; it is dropped at cleanup at the latest. */
export async function createScratchDatabase(adminUrl: string, purpose: string): Promise<ScratchDatabase> {
  const name = `cqs_bench_${purpose.replace(/\W/g, '')}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 7)}`;
  await withClient(adminUrl, (c) => c.query(`create database "${name}"`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const drop = deferCleanup(async () => {
    await withClient(adminUrl, (c) => c.query(`drop database if exists "${name}" with (force)`));
  });
  return { name, url: url.toString(), drop };
}

/** "PostgreSQL <server_version>", or undefined when the server cannot be reached. */
export async function postgresVersion(adminUrl: string): Promise<string | undefined> {
  try {
    return await withClient(adminUrl, async (c) => {
      const result = await c.query<{ server_version: string }>('show server_version');
      return `PostgreSQL ${result.rows[0]?.server_version}`;
    });
  } catch {
    return undefined;
  }
}
