/**
 * Scenario 6: call/create latency on PostgreSQL with 10 thousand, then 1 million conversations already
 * stored (BENCH_GROWTH_ROWS), one request at a time (BENCH_GROWTH_CONNECTIONS), so latency is the cost of a
 * request, not queueing. Two services run side by side on two databases, one filled to each size, and
 * their phases alternate in short slices: both see the same background load of a shared machine.
 */
import { fillConversations } from '../lib/bulk-load.ts';
import { createRequest } from '../lib/payloads.ts';
import { createScratchDatabase, type ScratchDatabase } from '../lib/postgres.ts';
import { growthEntry } from '../lib/report.ts';
import { type BenchService, startBenchService } from '../lib/service.ts';
import type { Settings } from '../lib/settings.ts';
import { CREATE_PATH } from './create.ts';
import {
  type BenchContext,
  compare,
  type PlannedEntry,
  requireRoute,
  type Scenario,
  type Side,
  type SideResult,
  SkipScenario,
} from './scenario.ts';

const MAX_RATIO = 1.25;
/** Slices per side: more than elsewhere, since a p99 is what is compared. */
const ROUNDS = 5;

/** 10000 → "10k", 1000000 → "1M". */
export function shortCount(n: number): string {
  if (n >= 1e6 && n % 1e5 === 0) return `${n / 1e6}M`;
  if (n >= 1e3 && n % 100 === 0) return `${n / 1e3}k`;
  return String(n);
}

const entries = (settings: Settings): [PlannedEntry, PlannedEntry] => {
  const many = shortCount(settings.growthRows);
  const few = shortCount(settings.growthBaseRows);
  const baseline = `create with ${few} stored`;
  const how = `PostgreSQL, ${settings.growthConnections} conn.`;
  return [
    {
      name: `6 growth: create p50 with ${many} stored vs ${few} (${how})`,
      baseline,
      target: `p50 ≤ ${MAX_RATIO.toFixed(2)}×`,
    },
    {
      name: `6 growth: create p99 with ${many} stored vs ${few} (${how})`,
      baseline,
      target: `p99 ≤ ${MAX_RATIO.toFixed(2)}×`,
    },
  ];
};

/** A service on its own database, filled to `rows` conversations. */
async function filledService(context: BenchContext, label: string, rows: number, into: ScratchDatabase[]) {
  const { settings } = context;
  const db = await createScratchDatabase(settings.postgresUrl, label);
  into.push(db);
  const service = await startBenchService({
    name: label,
    databaseUrl: db.url,
    cpuProfileDir: settings.cpuProfileDir,
  });
  try {
    requireRoute(service, 'POST', CREATE_PATH);
    const owner = { agentEmail: service.agentEmail, productId: service.productId };
    const stored = await fillConversations(db.url, owner, rows, (m) => context.log(`${label} ${m}`));
    return { service, stored };
  } catch (error) {
    await service.stop();
    throw error;
  }
}

function side(context: BenchContext, label: string, service: BenchService): Side {
  return {
    label,
    pid: service.pid,
    spec: {
      url: service.url,
      path: CREATE_PATH,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${service.callsKey}` },
      request: createRequest(service.agentEmail, service.productId),
      connections: context.settings.growthConnections,
    },
  };
}

/** Scenario 6. */
export const growthScenario: Scenario = {
  id: 'growth',
  entries,
  async run(context) {
    const { settings } = context;
    if (!context.postgres) throw new SkipScenario('PostgreSQL not reachable');
    const [p50Entry, p99Entry] = entries(settings);
    const dbs: ScratchDatabase[] = [];
    const services: BenchService[] = [];
    try {
      const few = await filledService(context, 'growth-few', settings.growthBaseRows, dbs);
      services.push(few.service);
      const many = await filledService(context, 'growth-many', settings.growthRows, dbs);
      services.push(many.service);
      const [before, after] = (await compare(
        context,
        [
          side(context, `create with ${few.stored} stored`, few.service),
          side(context, `create with ${many.stored} stored`, many.service),
        ],
        ROUNDS,
      )) as [SideResult, SideResult];
      const earlier = { ...before, name: p50Entry.baseline };
      return [
        growthEntry({ name: p50Entry.name, service: after, earlier, which: 'p50_ms', maxRatio: MAX_RATIO }),
        growthEntry({ name: p99Entry.name, service: after, earlier, which: 'p99_ms', maxRatio: MAX_RATIO }),
      ];
    } finally {
      for (const s of services) await s.stop();
      for (const db of dbs) await db.drop();
    }
  },
};
