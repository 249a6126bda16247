/**
 * Scenario 11: webhooks on PostgreSQL, delivered to a receiver in this process that answers 204 at once.
 * First, create throughput with one endpoint subscribed against a service with none (alternating slices,
 * target ≥ 0.9×). Then BENCH_WEBHOOK_ENDPOINTS endpoints (4) subscribe and creates run at full speed for
 * BENCH_DURATION: deliveries per second from the first arrival to the last once everything arrived (target
 * ≥ 500/s), and the lag of each delivery, from its event's `created_at` (the start of the transaction that
 * wrote it, so the lag includes that transaction) to its arrival (targets p50 ≤ 100 ms, p99 ≤ 1 s).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { quantile, runLoad } from '../lib/load.ts';
import { createRequest } from '../lib/payloads.ts';
import { createScratchDatabase, type ScratchDatabase } from '../lib/postgres.ts';
import { latencyEntry, ratioEntry, type ScenarioEntry, unmeasuredEntry } from '../lib/report.ts';
import type { BenchService } from '../lib/service.ts';
import { startBenchService } from '../lib/service.ts';
import type { Settings } from '../lib/settings.ts';
import { CREATE_PATH } from './create.ts';
import {
  compare,
  type PhaseSpec,
  requireRoute,
  type Scenario,
  type SideResult,
  SkipScenario,
  using,
} from './scenario.ts';

const RATE = (n: number) => `11 webhooks: deliveries per second, ${n} endpoints (PostgreSQL)`;
const LAG_P50 = '11 webhooks: lag commit → delivery, p50 (PostgreSQL)';
const LAG_P99 = '11 webhooks: lag commit → delivery, p99 (PostgreSQL)';
const CREATE = '11 webhooks: POST call/create with an endpoint subscribed (PostgreSQL)';
const CREATE_BASELINE = 'the same service with no endpoint';
/** How long the deliveries may take to catch up once the load stops. */
const DRAIN_MS = 120_000;

/** The receiver: every first arrival of a (path, webhook-id), with its lag. */
interface Receiver {
  url: string;
  server: Server;
  seen: Set<string>;
  /** Event ids that arrived before the last reset: a late repeat of one is not counted again. */
  earlier: Set<string>;
  lags: number[];
  first: number;
  last: number;
  reset(): void;
}

async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    server: createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (c: Buffer) => chunks.push(c));
      request.on('end', () => {
        const now = Date.now();
        response.writeHead(204).end();
        const id = String(request.headers['webhook-id']);
        const key = `${request.url} ${id}`;
        if (receiver.seen.has(key) || receiver.earlier.has(id)) return;
        receiver.seen.add(key);
        const event = JSON.parse(Buffer.concat(chunks).toString()) as { created_at: string };
        receiver.lags.push(now - Date.parse(event.created_at));
        if (receiver.first === 0) receiver.first = now;
        receiver.last = now;
      });
    }),
    seen: new Set(),
    earlier: new Set(),
    lags: [],
    first: 0,
    last: 0,
    reset() {
      for (const key of receiver.seen) receiver.earlier.add(key.slice(key.indexOf(' ') + 1));
      receiver.seen.clear();
      receiver.lags = [];
      receiver.first = 0;
      receiver.last = 0;
    },
  };
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}`;
  return receiver;
}

async function countEvents(db: ScratchDatabase): Promise<number> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const r = await client.query(`select count(*)::int as n from events where type like 'call.%'`);
    return r.rows[0].n as number;
  } finally {
    await client.end();
  }
}

/** Waits until the receiver has `endpoints` deliveries of every event written since `since` events. */
async function drain(db: ScratchDatabase, receiver: Receiver, endpoints: number, since: number) {
  const deadline = Date.now() + DRAIN_MS;
  for (;;) {
    const expected = endpoints * ((await countEvents(db)) - since);
    if (receiver.seen.size >= expected) return { expected, missing: 0 };
    if (Date.now() > deadline) return { expected, missing: expected - receiver.seen.size };
    await sleep(100);
  }
}

async function addEndpoint(service: BenchService, url: string) {
  const res = await fetch(`${service.url}/api/v1/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${service.eventsKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  });
  if (res.status !== 201)
    throw new Error(`POST /api/v1/webhooks answered ${res.status}: ${await res.text()}`);
}

function createSpec(service: BenchService): PhaseSpec {
  return {
    url: service.url,
    path: CREATE_PATH,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${service.callsKey}` },
    request: createRequest(service.agentEmail, service.productId),
  };
}

function planned(settings: Settings) {
  return [
    { name: CREATE, baseline: CREATE_BASELINE, target: '≥ 0.90' },
    { name: RATE(settings.webhookEndpoints), baseline: '—', target: '≥ 500 deliveries/s' },
    { name: LAG_P50, baseline: '—', target: 'p50 ≤ 100 ms' },
    { name: LAG_P99, baseline: '—', target: 'p99 ≤ 1000 ms' },
  ];
}

/** Scenario 11. */
export const webhooksScenario: Scenario = {
  id: 'webhooks',
  entries: planned,
  async run(context) {
    const { settings } = context;
    if (!context.postgres) throw new SkipScenario('PostgreSQL not reachable');
    const withDb = await createScratchDatabase(settings.postgresUrl, 'webhooks');
    const noneDb = await createScratchDatabase(settings.postgresUrl, 'nohooks');
    const receiver = await startReceiver();
    const start = (name: string, db: ScratchDatabase) =>
      startBenchService({
        name,
        databaseUrl: db.url,
        cpuProfileDir: settings.cpuProfileDir,
        env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
      });
    try {
      return await using(start('webhooks', withDb), (hooked) =>
        using(start('webhooks-none', noneDb), async (none): Promise<ScenarioEntry[]> => {
          requireRoute(hooked, 'POST', '/api/v1/webhooks');
          await addEndpoint(hooked, `${receiver.url}/0`);
          const [withHook, without] = (await compare(context, [
            { label: 'create, 1 endpoint subscribed', pid: hooked.pid, spec: createSpec(hooked) },
            { label: 'create, no endpoint', pid: none.pid, spec: createSpec(none) },
          ])) as [SideResult, SideResult];
          const entries: ScenarioEntry[] = [
            ratioEntry({
              name: CREATE,
              service: withHook,
              baseline: { name: CREATE_BASELINE, rps: without.rps, errors: without.errors },
              minRatio: 0.9,
            }),
          ];
          const settled = await drain(withDb, receiver, 1, 0);
          if (settled.missing > 0) {
            const why = `failed: ${settled.missing} of ${settled.expected} deliveries did not arrive`;
            return [
              ...entries,
              ...planned(settings)
                .slice(1)
                .map((p) => unmeasuredEntry(p.name, p.baseline, p.target, why)),
            ];
          }
          const endpoints = settings.webhookEndpoints;
          for (let i = 1; i < endpoints; i++) await addEndpoint(hooked, `${receiver.url}/${i}`);
          const since = await countEvents(withDb);
          receiver.reset();
          const load = await runLoad({
            connections: settings.connections,
            durationS: settings.durationS,
            warmupS: 0,
            ...createSpec(hooked),
          });
          const { missing, expected } = await drain(withDb, receiver, endpoints, since);
          const seconds = Math.max(0.001, (receiver.last - receiver.first) / 1000);
          const rate = receiver.seen.size / seconds;
          const lags = Float64Array.from(receiver.lags).sort();
          const measured = {
            rps: rate,
            p50_ms: quantile(lags, 0.5),
            p99_ms: quantile(lags, 0.99),
            errors: load.errors + missing,
            peak_rss_mb: undefined,
          };
          context.log(
            `webhooks: ${load.rps.toFixed(1)} creates/s → ${receiver.seen.size} of ${expected} deliveries in ` +
              `${seconds.toFixed(1)} s (${rate.toFixed(1)}/s), lag p50 ${measured.p50_ms.toFixed(1)} ms, ` +
              `p99 ${measured.p99_ms.toFixed(1)} ms, ${missing} missing`,
          );
          const rateEntry = latencyEntry({
            name: RATE(endpoints),
            service: measured,
            which: 'p50_ms',
            maxMs: 0,
          });
          return [
            ...entries,
            { ...rateEntry, target: '≥ 500 deliveries/s', met: measured.errors === 0 && rate >= 500 },
            latencyEntry({ name: LAG_P50, service: measured, which: 'p50_ms', maxMs: 100 }),
            latencyEntry({ name: LAG_P99, service: measured, which: 'p99_ms', maxMs: 1000 }),
          ];
        }),
      );
    } finally {
      receiver.server.closeAllConnections();
      receiver.server.close();
      await withDb.drop();
      await noneDb.drop();
    }
  },
};
