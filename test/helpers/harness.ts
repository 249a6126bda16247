/**
 * The test harness: a real app on a real database (PGlite in a temp directory, or a fresh database on the
 * PostgreSQL server of TEST_DATABASE_URL), real storage in a temp directory, requests through `inject`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { createMediaInfoProber, type MediaProber } from '../../src/adapters/probe/mediainfo.ts';
import { buildApp, type RegisteredRoute } from '../../src/app.ts';
import { type Config, loadConfig } from '../../src/config/config.ts';
import { closeServices, openServices } from '../../src/server.ts';
import type { Services } from '../../src/services.ts';
import { jobHandlers } from '../../src/worker/jobs.ts';
import { startServiceWorker } from '../../src/worker/start.ts';
import { runDueJobs, type Worker } from '../../src/worker/worker.ts';
import { makeCompany, type TestCompany } from './fixtures.ts';

/** The databases the suite runs on: always PGlite, and PostgreSQL when TEST_DATABASE_URL is set. */
export const BACKENDS: ('pglite' | 'postgres')[] = process.env.TEST_DATABASE_URL
  ? ['pglite', 'postgres']
  : ['pglite'];

/** A running app for one test file. */
export interface Harness {
  backend: 'pglite' | 'postgres';
  app: FastifyInstance;
  services: Services;
  config: Config;
  dataDir: string;
  /** The database URL when on PostgreSQL (a database of this harness's own). */
  databaseUrl: string | undefined;
  /** Every route the app registered. */
  routes: RegisteredRoute[];
  /** Everything the app logged so far. */
  logs(): string;
  /** Runs every due job of the queue, one by one, until none is due; returns how many ran. */
  runJobs(): Promise<number>;
  /** A new company with an admin, an agent, a product and keys. */
  company(): Promise<TestCompany>;
  /** `inject` with a Bearer key and a JSON body. */
  request(options: {
    method: string;
    url: string;
    key?: string;
    body?: unknown;
    headers?: Record<string, string>;
  }): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** Makes a fresh PostgreSQL database on the TEST_DATABASE_URL server and returns its URL and a dropper. */
export async function createPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error('TEST_DATABASE_URL is not set');
  const name = `cqs_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop database if exists "${name}" with (force)`);
      await c.end();
    },
  };
}

/** Options of a harness beyond configuration. */
export interface HarnessOptions {
  /** Run the job worker in the background, as `cqs serve` does with WORKER=true. */
  worker?: boolean;
}

/** Starts an app for a test file. `env` adds configuration variables. */
export async function startHarness(
  backend: 'pglite' | 'postgres',
  env: Record<string, string> = {},
  options: HarnessOptions & { shareDatabaseOf?: Harness } = {},
): Promise<Harness> {
  const dataDir = await mkdtemp(join(tmpdir(), 'cqs-test-'));
  const shared = options.shareDatabaseOf?.databaseUrl;
  // A second app on the database of another harness stands for a second process of one deployment.
  const pgDb =
    shared !== undefined
      ? { url: shared, drop: async () => {} }
      : backend === 'postgres'
        ? await createPostgresDatabase()
        : undefined;
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    PUBLIC_URL: 'http://127.0.0.1:8080',
    CQS_BOOTSTRAP: 'false',
    WORKER: 'false',
    // The service's own limits (2 s to get a pooled connection, 3 s a statement) are for production; a test
    // on a loaded CI machine may wait longer than that for its turn, which is not what it tests. Tests of
    // those limits set them explicitly.
    DB_CONNECT_TIMEOUT: '30',
    DB_STATEMENT_TIMEOUT: '60',
    ...(pgDb ? { DATABASE_URL: pgDb.url } : {}),
    ...env,
  });
  const services = await openServices(config);
  let log = '';
  const logStream = new PassThrough();
  logStream.on('data', (chunk: Buffer) => {
    log += chunk.toString();
  });
  const routes: Harness['routes'] = [];
  const app = await buildApp(services, { logStream, onRoute: (r) => routes.push(r) });
  const worker: Worker | undefined = options.worker ? startServiceWorker(services, app.log) : undefined;
  let prober: MediaProber | undefined;
  return {
    backend,
    app,
    services,
    config,
    dataDir,
    databaseUrl: pgDb?.url,
    routes,
    logs: () => log,
    runJobs() {
      prober ??= createMediaInfoProber();
      return runDueJobs(services.queue, jobHandlers(services, prober), app.log);
    },
    company: () => makeCompany(services.database.db),
    request({ method, url, key, body, headers }) {
      const options: InjectOptions = {
        method: method as InjectOptions['method'],
        url,
        headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
      };
      if (body !== undefined) options.payload = body as InjectOptions['payload'];
      return app.inject(options);
    },
    async close() {
      await worker?.stop();
      prober?.close();
      await app.close();
      await closeServices(services);
      await pgDb?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Runs `statement` past the service's own code (PGlite's driver, or a connection of its own on PostgreSQL):
 * only the database's NOTIFY can tell the service that something changed.
 */
export async function runBehindTheService(h: Harness, statement: string): Promise<void> {
  const pglite = h.services.database.pglite;
  if (pglite) {
    await pglite.exec(statement);
    return;
  }
  const other = new pg.Client({ connectionString: h.databaseUrl });
  await other.connect();
  await other.query(statement).finally(() => other.end());
}
