/**
 * Scenario 11: webhooks on PostgreSQL, delivered to a receiver in this process that answers 204 at once.
 * First, create throughput with one endpoint subscribed against a service with none (alternating slices,
 * target ≥ 0.9×). Then BENCH_WEBHOOK_ENDPOINTS endpoints (4) subscribe and creates run at full speed for
 * BENCH_DURATION: deliveries per second from the first arrival to the last once everything arrived (target
 * ≥ 500/s). Last, creates paced so that the endpoints are owed 500 deliveries per second: the lag of each
 * delivery, from its event's `created_at` (the start of the transaction that wrote it, so the lag includes
 * that transaction) to its arrival (targets p50 ≤ 100 ms, p99 ≤ 1 s).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { ANALYZE_CALL_JOB } from '../../src/domain/analysis/analysis.ts';
import { quantile, runLoad } from '../lib/load.ts';
import { createRequest } from '../lib/payloads.ts';
import { createScratchDatabase, type ScratchDatabase } from '../lib/postgres.ts';
import { latencyEntry, ratioEntry, type ScenarioEntry, unmeasuredEntry } from '../lib/report.ts';
import type { BenchService } from '../lib/service.ts';
import { startBenchService } from '../lib/service.ts';
import type { Settings } from '../lib/settings.ts';
import { CREATE_PATH } from './create.ts';
import {
  type BenchContext,
  compare,
  type PhaseSpec,
  requireRoute,
  type Scenario,
  type SideResult,
  SkipScenario,
  using,
} from './scenario.ts';

const RATE = (n: number) => `11 webhooks: deliveries per second, ${n} endpoints (PostgreSQL)`;
const LAG_P50 = '11 webhooks: lag commit → delivery at 500 deliveries/s, p50 (PostgreSQL)';
const LAG_P99 = '11 webhooks: lag commit → delivery at 500 deliveries/s, p99 (PostgreSQL)';
const CREATE = '11 webhooks: POST call/create with an endpoint subscribed (PostgreSQL)';
const CREATE_BASELINE = 'the same service with no endpoint';
/** Deliveries per second the service should sustain; the lag is measured at this load. */
const TARGET_RATE = 500;
/** How long the deliveries may take to catch up once the load stops. */
const DRAIN_MS = 120_000;

/** The receiver: every first arrival of a (path, webhook-id), with its lag. */
interface Receiver {
  url: string;
  server: Server;
  seen: Set<string>;
  /** Only events written from this time on (ms) count: a late commit of an earlier phase does not. */
  from: number;
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
        const key = `${request.url} ${request.headers['webhook-id']}`;
        const event = JSON.parse(Buffer.concat(chunks).toString()) as { created_at: string };
        const created = Date.parse(event.created_at);
        if (receiver.seen.has(key) || created < receiver.from) return;
        receiver.seen.add(key);
        receiver.lags.push(now - created);
        if (receiver.first === 0) receiver.first = now;
        receiver.last = now;
      });
    }),
    seen: new Set(),
    from: 0,
    lags: [],
    first: 0,
    last: 0,
    reset() {
      receiver.from = Date.now();
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

/** The one number `sql` answers (as column n) on the scratch database. */
async function queryNumber(db: ScratchDatabase, sql: string, params: unknown[]): Promise<number> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return Number((await client.query(sql, params)).rows[0].n);
  } finally {
    await client.end();
  }
}

/**
 * Events written from `from` (ms) on, of every type: the endpoints subscribe to all (a create with a
 * transcript also writes analysis.ready once its analysis ran).
 */
function countEvents(db: ScratchDatabase, from: number): Promise<number> {
  return queryNumber(db, 'select count(*) as n from events where created_at >= $1', [new Date(from)]);
}

/** Events per call of the calls created from `from` (ms) on, counted once the drain saw them all. */
function eventsPerCall(db: ScratchDatabase, from: number): Promise<number> {
  return queryNumber(
    db,
    `with mine as (select id::text as id from conversations where created_at >= $1)
     select (select count(*) from events where data->>'call_id' in (select id from mine))::float8
            / greatest(1, (select count(*) from mine)) as n`,
    [new Date(from)],
  );
}

/** Analysis jobs still to run: each writes an event when it ends. */
function pendingAnalyses(db: ScratchDatabase): Promise<number> {
  return queryNumber(db, 'select count(*) as n from jobs where kind = $1 and attempts < max_attempts', [
    ANALYZE_CALL_JOB,
  ]);
}

/**
 * Waits until every analysis ran and the receiver has `endpoints` deliveries of every event written since
 * its reset.
 */
async function drain(db: ScratchDatabase, receiver: Receiver, endpoints: number) {
  const deadline = Date.now() + DRAIN_MS;
  for (;;) {
    const expected = endpoints * (await countEvents(db, receiver.from));
    if (receiver.seen.size >= expected && (await pendingAnalyses(db)) === 0) {
      // An analysis that ended between the two counts wrote one more event: count again.
      const settled = endpoints * (await countEvents(db, receiver.from));
      if (receiver.seen.size >= settled) return { expected: settled, missing: 0 };
      continue;
    }
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

/**
 * Runs creates for BENCH_DURATION (at `createsPerSecond`, or flat out) and waits until every event reached
 * every endpoint: rps is deliveries per second from the first arrival to the last, p50/p99 their lag.
 */
async function deliveryPhase(
  context: BenchContext,
  service: BenchService,
  db: ScratchDatabase,
  receiver: Receiver,
  endpoints: number,
  createsPerSecond?: number,
) {
  const { settings } = context;
  receiver.reset();
  const load = await runLoad({
    connections: settings.connections,
    durationS: settings.durationS,
    warmupS: 0,
    ...createSpec(service),
    ...(createsPerSecond ? { overallRate: createsPerSecond } : {}),
  });
  await sleep(1000); // the requests still in flight when the load stopped commit meanwhile
  const { missing, expected } = await drain(db, receiver, endpoints);
  const seconds = Math.max(0.001, (receiver.last - receiver.first) / 1000);
  const lags = Float64Array.from(receiver.lags).sort();
  const measured = {
    /** Events each create wrote, so that a paced phase can owe the endpoints a known rate. */
    eventsPerCreate: await eventsPerCall(db, receiver.from),
    rps: receiver.seen.size / seconds,
    p50_ms: quantile(lags, 0.5),
    p99_ms: quantile(lags, 0.99),
    errors: load.errors + missing,
    peak_rss_mb: undefined,
  };
  context.log(
    `webhooks (${createsPerSecond ? `creates paced at ${createsPerSecond.toFixed(1)}/s` : 'creates flat out'}): ` +
      `${load.rps.toFixed(1)} creates/s → ${receiver.seen.size} of ${expected} deliveries in ` +
      `${seconds.toFixed(1)} s (${measured.rps.toFixed(1)}/s), lag p50 ${measured.p50_ms.toFixed(1)} ms, ` +
      `p99 ${measured.p99_ms.toFixed(1)} ms, ${missing} missing` +
      (load.errors > 0 ? `, ${load.errors} creates failed (first: ${load.firstFailure})` : ''),
  );
  // What the service logged (warnings and errors) says why a create failed.
  if (load.errors > 0) context.log(`the service's log, last 2 kB:\n${service.child.output().slice(-2048)}`);
  return measured;
}

function planned(settings: Settings) {
  return [
    { name: CREATE, baseline: CREATE_BASELINE, target: '≥ 0.90' },
    { name: RATE(settings.webhookEndpoints), baseline: '—', target: `≥ ${TARGET_RATE} deliveries/s` },
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
          const settled = await drain(withDb, receiver, 1);
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
          // Capacity: creates at full speed build a backlog; deliveries run flat out until it is gone.
          const capacity = await deliveryPhase(context, hooked, withDb, receiver, endpoints);
          // Lag at the target load: creates paced so that the endpoints are owed TARGET_RATE deliveries/s,
          // counting every event a create writes (measured in the capacity phase).
          const lag = await deliveryPhase(
            context,
            hooked,
            withDb,
            receiver,
            endpoints,
            TARGET_RATE / endpoints / Math.max(1, capacity.eventsPerCreate),
          );
          const rateEntry = latencyEntry({
            name: RATE(endpoints),
            service: capacity,
            which: 'p50_ms',
            maxMs: 0,
          });
          return [
            ...entries,
            {
              ...rateEntry,
              target: `≥ ${TARGET_RATE} deliveries/s`,
              met: capacity.errors === 0 && capacity.rps >= TARGET_RATE,
            },
            latencyEntry({ name: LAG_P50, service: lag, which: 'p50_ms', maxMs: 100 }),
            latencyEntry({ name: LAG_P99, service: lag, which: 'p99_ms', maxMs: 1000 }),
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
