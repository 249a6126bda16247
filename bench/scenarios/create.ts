/**
 * Scenarios 2 and 3: POST /api/v1/call/create (20 transcript segments, 5 tags, a fresh conversation_id per
 * request) vs the minimal Fastify route that inserts the same JSON as one row — on PostgreSQL (2) and on
 * the embedded database (3).
 */
import { startBaseline } from '../lib/baseline.ts';
import { createRequest } from '../lib/payloads.ts';
import { createScratchDatabase } from '../lib/postgres.ts';
import { ratioEntry } from '../lib/report.ts';
import { startBenchService } from '../lib/service.ts';
import {
  type BenchContext,
  compare,
  requireRoute,
  type Scenario,
  type SideResult,
  SkipScenario,
  using,
} from './scenario.ts';

/** The path of call/create, on the service and on the baselines alike. */
export const CREATE_PATH = '/api/v1/call/create';
const JSON_HEADERS = { 'content-type': 'application/json' };

async function runCreate(
  context: BenchContext,
  options: {
    name: string;
    label: string;
    databaseUrl?: string;
    baseline: 'pg-insert.ts' | 'pglite-insert.ts';
    baselineName: string;
    baselineEnv?: Record<string, string>;
  },
) {
  const { settings } = context;
  return using(
    startBenchService({
      name: options.label,
      databaseUrl: options.databaseUrl,
      cpuProfileDir: settings.cpuProfileDir,
    }),
    async (service) => {
      requireRoute(service, 'POST', CREATE_PATH);
      return using(startBaseline(options.baseline, options.baselineEnv), async (baseline) => {
        const request = createRequest(service.agentEmail, service.productId);
        const [measured, base] = (await compare(context, [
          {
            label: `service ${options.label}`,
            pid: service.pid,
            spec: {
              url: service.url,
              path: CREATE_PATH,
              method: 'POST',
              headers: { ...JSON_HEADERS, authorization: `Bearer ${service.callsKey}` },
              request,
            },
          },
          {
            label: options.baselineName,
            spec: { url: baseline.url, path: CREATE_PATH, method: 'POST', headers: JSON_HEADERS, request },
          },
        ])) as [SideResult, SideResult];
        return [
          ratioEntry({
            name: options.name,
            service: measured,
            baseline: { name: options.baselineName, rps: base.rps, errors: base.errors },
            minRatio: 0.4,
          }),
        ];
      });
    },
  );
}

const PG_NAME = '2 POST call/create (PostgreSQL)';
const PG_BASELINE = 'minimal Fastify + pg insert';
const EMBEDDED_NAME = '3 POST call/create (embedded db)';
const EMBEDDED_BASELINE = 'minimal Fastify + PGlite insert';

/** Scenario 2. */
export const createPostgresScenario: Scenario = {
  id: 'create-pg',
  entries: () => [{ name: PG_NAME, baseline: PG_BASELINE, target: '≥ 0.40' }],
  async run(context) {
    if (!context.postgres) throw new SkipScenario('PostgreSQL not reachable');
    const serviceDb = await createScratchDatabase(context.settings.postgresUrl, 'create');
    const baselineDb = await createScratchDatabase(context.settings.postgresUrl, 'insert');
    try {
      return await runCreate(context, {
        name: PG_NAME,
        label: 'create-pg',
        databaseUrl: serviceDb.url,
        baseline: 'pg-insert.ts',
        baselineName: PG_BASELINE,
        baselineEnv: { DATABASE_URL: baselineDb.url },
      });
    } finally {
      await serviceDb.drop();
      await baselineDb.drop();
    }
  },
};

/** Scenario 3. */
export const createEmbeddedScenario: Scenario = {
  id: 'create-embedded',
  entries: () => [{ name: EMBEDDED_NAME, baseline: EMBEDDED_BASELINE, target: '≥ 0.40' }],
  run: (context) =>
    // The PGlite baseline keeps PGlite's default shared_buffers (128 MB) against the service's 16 MB: the
    // ratio understates the service (bench/baselines/pglite-insert.ts; left so).
    runCreate(context, {
      name: EMBEDDED_NAME,
      label: 'create-embedded',
      baseline: 'pglite-insert.ts',
      baselineName: EMBEDDED_BASELINE,
    }),
};
