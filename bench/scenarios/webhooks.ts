/**
 * Scenario 11: webhooks on PostgreSQL, delivered to a receiver that answers 204 at once, in a process of
 * its own (bench/lib/webhook-receiver-server.ts), not the load generator's.
 *
 * First, create throughput with one endpoint subscribed against the same service with none (target
 * ≥ 0.9×), in alternating slices. A create with an endpoint is not done when it is answered: its event (and
 * the analysis.ready event its transcript's analysis writes) are delivered afterwards, by the same service,
 * its database and the receiver. So each side's work is charged to it: after each of its slices (and its
 * warm-up, uncharged) the side waits until everything its slice caused has finished — every analysis job
 * run, every event written since the slice began delivered (the receiver's count), no transaction of its
 * service open — and that drain counts in the side's duration: its rate is creates / (slices + drains).
 * What has not finished SLICE_DRAIN_MS after a slice counts as errors. The other side's slice starts only
 * then, so no delivery of one side runs during the other's slice (each drain also logs any that did). The
 * side with no endpoint drains the same way (its analyses), so both pay the same for the wait's polling.
 *
 * Then BENCH_WEBHOOK_ENDPOINTS endpoints (4) subscribe and creates run at full speed for BENCH_DURATION:
 * deliveries per second from the first arrival to the last once everything arrived (target ≥ 500/s). Last,
 * creates paced so that the endpoints are owed 500 deliveries per second: the lag of each delivery, from its
 * event's `created_at` (the start of the transaction that wrote it, so the lag includes that transaction) to
 * its arrival (targets p50 ≤ 100 ms, p99 ≤ 1 s).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { ANALYZE_CALL_JOB } from '../../src/domain/analysis/analysis.ts';
import { quantile, runLoad } from '../lib/load.ts';
import { createRequest } from '../lib/payloads.ts';
import { createScratchDatabase, type ScratchDatabase } from '../lib/postgres.ts';
import { latencyEntry, ratioEntry, type ScenarioEntry, unmeasuredEntry } from '../lib/report.ts';
import { readPeakRssMb } from '../lib/rss.ts';
import type { BenchService } from '../lib/service.ts';
import { startBenchService } from '../lib/service.ts';
import type { Settings } from '../lib/settings.ts';
import { type Receiver, startReceiver } from '../lib/webhook-receiver.ts';
import { CREATE_PATH } from './create.ts';
import {
  type BenchContext,
  compare,
  type Drain,
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
/** How long the deliveries of a delivery phase may take to catch up once the load stops. */
const DRAIN_MS = 120_000;
/** How long the work of one slice of the create comparison may take to drain (what is left: errors). */
const SLICE_DRAIN_MS = 60_000;
/** How often a slice's drain looks (the wait is charged, so it looks often; both sides alike). */
const SLICE_POLL_MS = 25;

/** A connection to a scenario database that reads what is still to be done there. */
export interface Probe {
  /**
   * Events written from `from` (ms) on, of every type (the endpoints subscribe to all: a create with a
   * transcript also writes analysis.ready once its analysis ran); analysis jobs still to run (each writes
   * an event when it ends); transactions of the service's sessions open on the database (a create still in
   * flight; autovacuum's workers are not counted).
   */
  state(from: number): Promise<{ events: number; analyses: number; open: number }>;
  close(): Promise<void>;
}

export async function openProbe(db: ScratchDatabase): Promise<Probe> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  return {
    async state(from) {
      const { rows } = await client.query(
        `select (select count(*) from events where created_at >= $1)::int as events,
                (select count(*) from jobs where kind = $2 and attempts < max_attempts)::int as analyses,
                (select count(*) from pg_stat_activity
                  where datname = current_database() and pid <> pg_backend_pid()
                    and backend_type = 'client backend' and xact_start is not null)::int as open`,
        [new Date(from), ANALYZE_CALL_JOB],
      );
      return rows[0] as { events: number; analyses: number; open: number };
    },
    close: () => client.end(),
  };
}

/** What a wait for the deliveries found: deliveries owed, and what was left when it gave up (0 on time). */
interface Settled {
  expected: number;
  delivered: number;
  /** Deliveries that did not arrive and analyses that did not run before the bound. */
  missing: number;
  detail: string | undefined;
}

/**
 * Waits until every analysis ran, no transaction of the service is open, and the receiver (when given)
 * has `endpoints` deliveries of every event written since `from`, seen on two polls in a row (a create
 * still in flight when the load stopped, or an analysis that ended between two counts, writes one more
 * event); or until `boundMs` pass.
 */
export async function settle(
  probe: Probe,
  receiver: Receiver | undefined,
  endpoints: number,
  from: number,
  boundMs: number,
  pollMs: number,
): Promise<Settled> {
  const deadline = performance.now() + boundMs;
  let before: number | undefined;
  for (;;) {
    const [state, stats] = await Promise.all([probe.state(from), receiver?.stats()]);
    const expected = endpoints * state.events;
    const delivered = stats?.delivered ?? 0;
    const done = delivered >= expected && state.analyses === 0 && state.open === 0;
    if (done && before === state.events) return { expected, delivered, missing: 0, detail: undefined };
    before = done ? state.events : undefined;
    if (performance.now() > deadline) {
      const late = Math.max(0, expected - delivered);
      return {
        expected,
        delivered,
        missing: late + state.analyses,
        detail:
          `after ${boundMs / 1000} s, ${late} of ${expected} deliveries had not arrived and ` +
          `${state.analyses} analyses had not run`,
      };
    }
    await sleep(pollMs);
  }
}

/** Subscribes an endpoint of `url` to every type. */
export async function addEndpoint(service: BenchService, url: string) {
  const res = await fetch(`${service.url}/api/v1/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${service.eventsKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  });
  if (res.status !== 201)
    throw new Error(`POST /api/v1/webhooks answered ${res.status}: ${await res.text()}`);
}

/** The create scenario's request against `service`. */
export function createSpec(service: BenchService): PhaseSpec {
  return {
    url: service.url,
    path: CREATE_PATH,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${service.callsKey}` },
    request: createRequest(service.agentEmail, service.productId),
  };
}

/** Events per call of the calls created from `from` (ms) on, counted once the drain saw them all. */
async function eventsPerCall(db: ScratchDatabase, from: number): Promise<number> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `with mine as (select id::text as id from conversations where created_at >= $1)
       select (select count(*) from events where data->>'call_id' in (select id from mine))::float8
              / greatest(1, (select count(*) from mine)) as n`,
      [new Date(from)],
    );
    return Number(rows[0].n);
  } finally {
    await client.end();
  }
}

/**
 * Runs creates for BENCH_DURATION (at `createsPerSecond`, or flat out) and waits until every event reached
 * every endpoint: rps is deliveries per second from the first arrival to the last, p50/p99 their lag. The
 * peak RSS is the service's since it started (VmHWM), read once the deliveries are done.
 */
async function deliveryPhase(
  context: BenchContext,
  service: BenchService,
  db: ScratchDatabase,
  probe: Probe,
  receiver: Receiver,
  endpoints: number,
  createsPerSecond?: number,
) {
  const { settings } = context;
  const { from } = await receiver.reset();
  const load = await runLoad({
    connections: settings.connections,
    durationS: settings.durationS,
    warmupS: 0,
    ...createSpec(service),
    ...(createsPerSecond ? { overallRate: createsPerSecond } : {}),
  });
  await sleep(1000); // the requests still in flight when the load stopped commit meanwhile
  const { missing, expected, detail } = await settle(probe, receiver, endpoints, from, DRAIN_MS, 100);
  const stats = await receiver.stats();
  const seconds = Math.max(0.001, (stats.last - stats.first) / 1000);
  const lags = Float64Array.from(await receiver.lags()).sort();
  const measured = {
    /** Events each create wrote, so that a paced phase can owe the endpoints a known rate. */
    eventsPerCreate: await eventsPerCall(db, from),
    rps: stats.delivered / seconds,
    p50_ms: quantile(lags, 0.5),
    p99_ms: quantile(lags, 0.99),
    errors: load.errors + missing,
    peak_rss_mb: readPeakRssMb(service.pid),
  };
  context.log(
    `webhooks (${createsPerSecond ? `creates paced at ${createsPerSecond.toFixed(1)}/s` : 'creates flat out'}): ` +
      `${load.rps.toFixed(1)} creates/s → ${stats.delivered} of ${expected} deliveries in ` +
      `${seconds.toFixed(1)} s (${measured.rps.toFixed(1)}/s), lag p50 ${measured.p50_ms.toFixed(1)} ms, ` +
      `p99 ${measured.p99_ms.toFixed(1)} ms, ${missing} missing${detail ? ` (${detail})` : ''}` +
      (stats.malformed > 0 ? `, ${stats.malformed} deliveries not an event's JSON` : '') +
      (load.errors > 0 ? `, ${load.errors} creates failed (first: ${load.firstFailure})` : ''),
  );
  // What the service logged (warnings and errors) says why a create failed.
  if (load.errors > 0) context.log(`the service's log, last 2 kB:\n${service.child.output().slice(-2048)}`);
  return measured;
}

/**
 * The drain of a side of the create comparison: its slice's work (analyses; deliveries when `receiver`
 * is given) must be done before the next slice of either side. `tally` adds up, over the slices, what a
 * drain left undone and the deliveries that arrived during the other side's slices (there should be none).
 */
function sliceDrain(
  context: BenchContext,
  label: string,
  probe: Probe,
  receiver: Receiver | undefined,
  tally: { missing: number; strayDeliveries: number },
  strayWatch?: Receiver,
): Drain {
  let from = 0;
  let deliveredAtStart = 0;
  return {
    async begin() {
      from = receiver ? (await receiver.reset()).from : Date.now();
      if (strayWatch) deliveredAtStart = (await strayWatch.stats()).delivered;
    },
    async wait(after) {
      const started = performance.now();
      const stray = strayWatch ? (await strayWatch.stats()).delivered - deliveredAtStart : 0;
      tally.strayDeliveries += stray;
      const settled = await settle(probe, receiver, receiver ? 1 : 0, from, SLICE_DRAIN_MS, SLICE_POLL_MS);
      tally.missing += settled.missing;
      const last = receiver ? (await receiver.stats()).last : 0;
      context.log(
        `${label}: drained ${((performance.now() - started) / 1000).toFixed(2)} s after its ${after}` +
          (receiver
            ? `; ${settled.delivered} of ${settled.expected} deliveries of events written from its start on, the last ${last > 0 ? `${((last - from) / 1000).toFixed(2)} s after that start` : '(none)'}`
            : '') +
          (strayWatch ? `; deliveries that arrived during this ${after}: ${stray}` : '') +
          (settled.detail ? `; ${settled.detail}` : ''),
      );
      return { missing: settled.missing, detail: settled.detail };
    },
  };
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
    const start = (name: string, db: ScratchDatabase) =>
      startBenchService({
        name,
        databaseUrl: db.url,
        cpuProfileDir: settings.cpuProfileDir,
        env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
      });
    const probes: Probe[] = [];
    let receiver: Receiver | undefined;
    try {
      receiver = await startReceiver();
      const hookedProbe = await openProbe(withDb);
      probes.push(hookedProbe);
      const noneProbe = await openProbe(noneDb);
      probes.push(noneProbe);
      const to = receiver;
      return await using(start('webhooks', withDb), (hooked) =>
        using(start('webhooks-none', noneDb), async (none): Promise<ScenarioEntry[]> => {
          requireRoute(hooked, 'POST', '/api/v1/webhooks');
          await addEndpoint(hooked, `${to.url}/0`);
          // Each side drains after each slice, charged to it (see the file's comment).
          const tally = { missing: 0, strayDeliveries: 0 };
          const [withHook, without] = (await compare(context, [
            {
              label: 'create, 1 endpoint subscribed',
              pid: hooked.pid,
              spec: createSpec(hooked),
              drain: sliceDrain(context, 'create, 1 endpoint subscribed', hookedProbe, to, tally),
            },
            {
              label: 'create, no endpoint',
              pid: none.pid,
              spec: createSpec(none),
              drain: sliceDrain(context, 'create, no endpoint', noneProbe, undefined, tally, to),
            },
          ])) as [SideResult, SideResult];
          context.log(
            `webhooks: deliveries that arrived during the slices of the side with no endpoint: ${tally.strayDeliveries}`,
          );
          const entries: ScenarioEntry[] = [
            ratioEntry({
              name: CREATE,
              service: withHook,
              baseline: { name: CREATE_BASELINE, rps: without.rps, errors: without.errors },
              minRatio: 0.9,
            }),
          ];
          if (tally.missing > 0) {
            const why = `failed: ${tally.missing} deliveries or analyses of the create comparison did not finish`;
            return [
              ...entries,
              ...planned(settings)
                .slice(1)
                .map((p) => unmeasuredEntry(p.name, p.baseline, p.target, why)),
            ];
          }
          const endpoints = settings.webhookEndpoints;
          for (let i = 1; i < endpoints; i++) await addEndpoint(hooked, `${to.url}/${i}`);
          // Capacity: creates at full speed build a backlog; deliveries run flat out until it is gone.
          const capacity = await deliveryPhase(context, hooked, withDb, hookedProbe, to, endpoints);
          // Lag at the target load: creates paced so that the endpoints are owed TARGET_RATE deliveries/s,
          // counting every event a create writes (measured in the capacity phase).
          const lag = await deliveryPhase(
            context,
            hooked,
            withDb,
            hookedProbe,
            to,
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
              met: capacity.errors === 0 && (rateEntry.rps ?? 0) >= TARGET_RATE,
            },
            latencyEntry({ name: LAG_P50, service: lag, which: 'p50_ms', maxMs: 100 }),
            latencyEntry({ name: LAG_P99, service: lag, which: 'p99_ms', maxMs: 1000 }),
          ];
        }),
      );
    } finally {
      for (const probe of probes) await probe.close();
      await receiver?.stop();
      await withDb.drop();
      await noneDb.drop();
    }
  },
};
