/**
 * The service under test as a real child process: `cqs seed` provisions a company before it starts (the
 * embedded database admits one process at a time), then `cqs serve` listens on a free loopback port.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EnvSchema } from '../../src/config/config.ts';
import { generateApiKey } from '../../src/domain/access/api-keys.ts';
import { freePort } from '../../test/helpers/process.ts';
import { deferCleanup } from './cleanup.ts';
import { type Child, runNode, spawnNode, waitForHttp } from './process.ts';
import { noteServicePeak, trackServiceProcess } from './rss.ts';
import { nodeArgsOf, serviceDirOf } from './settings.ts';

/** The checkout whose service is measured: this one, or the one BENCH_SERVICE_DIR names (to compare builds). */
export const SERVICE_DIR = serviceDirOf(process.env) ?? fileURLToPath(new URL('../..', import.meta.url));
/** The `cqs` entry point of SERVICE_DIR. */
export const MAIN = join(SERVICE_DIR, 'src/cli/main.ts');
/** Node arguments of every service under test (BENCH_NODE_ARGS, split at spaces: V8 flags to compare). */
const NODE_ARGS = nodeArgsOf(process.env);

/** The bench company's names. */
export const BENCH = {
  company: 'Bench Co',
  adminEmail: 'admin@bench.test',
  agentEmail: 'agent@bench.test',
  product: 'Bench Product',
  /** Products seeded in all, so product/list answers a realistic list. */
  productCount: 5,
} as const;

/** A running service with its provisioned company. */
export interface BenchService {
  url: string;
  pid: number;
  child: Child;
  dataDir: string;
  databaseUrl: string | undefined;
  /** A key with scope `calls` (of the admin, who sees every product). */
  callsKey: string;
  /** A key with scope `handoff:write`. */
  writerKey: string;
  /** A key with scope `calls:read` (of the admin, who sees every call). */
  readerKey: string;
  /** A key with scopes `webhooks` and `events:read` (of the admin). */
  eventsKey: string;
  agentEmail: string;
  productId: number;
  /** True when the OpenAPI document lists `method path` (path as in the document, `{param}` style). */
  hasRoute(method: string, path: string): boolean;
  stop(): Promise<void>;
}

/** How to start one service. */
export interface ServiceOptions {
  /** Names the child in messages and its CPU profile. */
  name: string;
  /** A PostgreSQL database URL, or undefined for the embedded database. */
  databaseUrl?: string | undefined;
  /** Extra configuration variables (WORKER, …). */
  env?: Record<string, string>;
  /** Write a CPU profile of the service into this folder when it stops. */
  cpuProfileDir?: string | undefined;
}

/** The environment of a child: this process's, minus every variable the service reads, plus `env`. */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(EnvSchema.properties)) delete out[name];
  return { ...out, ...env };
}

function seedFile(callsKey: string, writerKey: string, readerKey: string, eventsKey: string): unknown {
  const products = Array.from({ length: BENCH.productCount }, (_, i) => ({
    name: i === 0 ? BENCH.product : `Bench Product ${i + 1}`,
  }));
  return {
    companies: [
      {
        name: BENCH.company,
        users: [
          { ref: 'admin', email: BENCH.adminEmail, role: 'admin' },
          { ref: 'agent', email: BENCH.agentEmail, role: 'agent' },
        ],
        products: products.map((p, i) => (i === 0 ? { ...p, grant: ['agent'] } : p)),
        api_keys: [
          { user: 'admin', scopes: ['calls'], key: callsKey },
          { user: 'admin', scopes: ['handoff:write'], key: writerKey },
          { user: 'admin', scopes: ['calls:read'], key: readerKey },
          { user: 'admin', scopes: ['webhooks', 'events:read'], key: eventsKey },
        ],
      },
    ],
  };
}

/** Seeds a fresh data directory (and database), starts `cqs serve` and waits until it is ready. */
export async function startBenchService(options: ServiceOptions): Promise<BenchService> {
  const dataDir = await mkdtemp(join(tmpdir(), 'cqs-bench-'));
  const removeDir = deferCleanup(() => rm(dataDir, { recursive: true, force: true }));
  const callsKey = generateApiKey();
  const writerKey = generateApiKey();
  const readerKey = generateApiKey();
  const eventsKey = generateApiKey();
  const seedPath = join(dataDir, 'seed.json');
  await writeFile(seedPath, JSON.stringify(seedFile(callsKey, writerKey, readerKey, eventsKey)));
  const base: Record<string, string> = {
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    CQS_BOOTSTRAP: 'false',
    RATE_LIMIT_MAX: '0',
    LOG_LEVEL: 'warn',
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
  };
  await runNode(`${options.name} seed`, MAIN, ['seed', seedPath], childEnv(base));

  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const nodeArgs = [
    ...NODE_ARGS,
    ...(options.cpuProfileDir
      ? [
          '--cpu-prof',
          `--cpu-prof-dir=${options.cpuProfileDir}`,
          `--cpu-prof-name=${options.name}.cpuprofile`,
        ]
      : []),
  ];
  const child = spawnNode(
    options.name,
    MAIN,
    ['serve'],
    childEnv({ ...base, PORT: String(port), ...options.env }),
    nodeArgs,
  );
  // Its scenario's record keeps the peak of every service process it started (run.ts).
  trackServiceProcess(child.pid, options.name, options.databaseUrl ? 'postgres' : 'embedded');
  const stop = async () => {
    noteServicePeak(child.pid);
    await child.stop();
    await removeDir();
  };
  try {
    await waitForHttp(child, `${url}/readyz`, 200);
    const headers = { authorization: `Bearer ${callsKey}` };
    const list = await fetch(`${url}/api/v1/product/list`, { headers });
    if (list.status !== 200) throw new Error(`product/list answered ${list.status}: ${await list.text()}`);
    const { products } = (await list.json()) as { products: { id: number; name: string }[] };
    const product = products.find((p) => p.name === BENCH.product);
    if (!product) throw new Error(`the seeded product is not listed: ${JSON.stringify(products)}`);
    const openapi = await fetch(`${url}/api/v1/openapi.json`);
    const doc = (await openapi.json()) as { paths?: Record<string, Record<string, unknown>> };
    const routes = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      for (const method of Object.keys(item)) routes.add(`${method.toUpperCase()} ${path}`);
    }
    const normal = (path: string) => path.replace(/\{[^}]*\}/g, '{}');
    const normalRoutes = new Set([...routes].map(normal));
    return {
      url,
      pid: child.pid,
      child,
      dataDir,
      databaseUrl: options.databaseUrl,
      callsKey,
      writerKey,
      readerKey,
      eventsKey,
      agentEmail: BENCH.agentEmail,
      productId: product.id,
      hasRoute: (method, path) => normalRoutes.has(normal(`${method.toUpperCase()} ${path}`)),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Sends `body` as JSON with `key` and answers the JSON reply; throws unless the status is `expected`. */
export async function requestJson<T = Record<string, unknown>>(
  service: BenchService,
  key: string,
  method: string,
  path: string,
  body: unknown,
  expected: number,
): Promise<T> {
  const response = await fetch(`${service.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== expected) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}
