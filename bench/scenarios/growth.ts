/**
 * Scenario 6: call/create latency on PostgreSQL with 10 thousand, then 1 million conversations already
 * stored (BENCH_GROWTH_ROWS), at a fixed request rate so latency is the cost of a request, not queueing.
 */
import { fillConversations } from '../lib/bulk-load.ts';
import { createRequest } from '../lib/payloads.ts';
import { createScratchDatabase } from '../lib/postgres.ts';
import { growthEntry } from '../lib/report.ts';
import { startBenchService } from '../lib/service.ts';
import type { Settings } from '../lib/settings.ts';
import { CREATE_PATH } from './create.ts';
import { measure, type PlannedEntry, requireRoute, type Scenario, SkipScenario, using } from './scenario.ts';

const MAX_RATIO = 1.25;

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
  return [
    {
      name: `6 growth: create p50 with ${many} stored vs ${few} (PostgreSQL, ${settings.growthRate} rps)`,
      baseline,
      target: `p50 ≤ ${MAX_RATIO.toFixed(2)}×`,
    },
    {
      name: `6 growth: create p99 with ${many} stored vs ${few} (PostgreSQL, ${settings.growthRate} rps)`,
      baseline,
      target: `p99 ≤ ${MAX_RATIO.toFixed(2)}×`,
    },
  ];
};

/** Scenario 6. */
export const growthScenario: Scenario = {
  id: 'growth',
  entries,
  async run(context) {
    const { settings } = context;
    if (!context.postgres) throw new SkipScenario('PostgreSQL not reachable');
    const [p50Entry, p99Entry] = entries(settings);
    const db = await createScratchDatabase(settings.postgresUrl, 'growth');
    try {
      return await using(
        startBenchService({ name: 'growth', databaseUrl: db.url, cpuProfileDir: settings.cpuProfileDir }),
        async (service) => {
          requireRoute(service, 'POST', CREATE_PATH);
          const owner = { agentEmail: service.agentEmail, productId: service.productId };
          const side = {
            pid: service.pid,
            spec: {
              url: service.url,
              path: CREATE_PATH,
              method: 'POST' as const,
              headers: { 'content-type': 'application/json', authorization: `Bearer ${service.callsKey}` },
              request: createRequest(service.agentEmail, service.productId),
              overallRate: settings.growthRate,
            },
          };
          const few = await fillConversations(db.url, owner, settings.growthBaseRows, context.log);
          const before = await measure(context, { ...side, label: `create with ${few} stored` });
          const many = await fillConversations(db.url, owner, settings.growthRows, context.log);
          const after = await measure(context, { ...side, label: `create with ${many} stored` });
          const earlier = { ...before, name: p50Entry.baseline };
          return [
            growthEntry({
              name: p50Entry.name,
              service: after,
              earlier,
              which: 'p50_ms',
              maxRatio: MAX_RATIO,
            }),
            growthEntry({
              name: p99Entry.name,
              service: after,
              earlier,
              which: 'p99_ms',
              maxRatio: MAX_RATIO,
            }),
          ];
        },
      );
    } finally {
      await db.drop();
    }
  },
};
