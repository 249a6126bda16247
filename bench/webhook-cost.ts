/**
 * `node bench/webhook-cost.ts [ENDPOINTS [CREATES_PER_SECOND [SECONDS]]]`: what webhook deliveries cost, by
 * process. Not a scenario of `npm run bench` (it judges nothing): one service on a scratch PostgreSQL
 * database with ENDPOINTS endpoints (1; 0 for none) on the bench's receiver, creates paced at
 * CREATES_PER_SECOND (300) for SECONDS (10) after a 3 s warm-up, then a wait until every analysis ran and every
 * event written since the load began reached every endpoint. Prints the CPU time per create of the service,
 * of its database's PostgreSQL backends and of the receiver (from /proc, so Linux only), and the deliveries'
 * lag. Run it with 0 and with 1 endpoint, interleaved, to see what the deliveries add; BENCH_SERVICE_DIR
 * measures another checkout. docs/performance.md has its figures.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { quantile, runLoad } from './lib/load.ts';
import { createScratchDatabase } from './lib/postgres.ts';
import { startBenchService } from './lib/service.ts';
import { startReceiver } from './lib/webhook-receiver.ts';
import { addEndpoint, createSpec, openProbe, settle } from './scenarios/webhooks.ts';

const [endpoints = 1, rate = 300, seconds = 10] = process.argv.slice(2).map(Number);
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Clock ticks per second of /proc's times (USER_HZ, 100 on Linux). */
const TICKS = 100;

/** User and system CPU seconds of a process, 0 once it is gone. */
function cpuSeconds(pid: number | string): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return 0;
  }
}

/** CPU seconds of the backends (and autovacuum workers) of one database: their titles name it. */
function databaseCpuSeconds(database: string): number {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let title = '';
    try {
      title = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (title.startsWith('postgres:') && title.includes(` ${database} `)) total += cpuSeconds(pid);
  }
  return total;
}

const db = await createScratchDatabase(adminUrl, 'webhookcost');
const receiver = await startReceiver();
const service = await startBenchService({
  name: 'webhook-cost',
  databaseUrl: db.url,
  env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
});
const probe = await openProbe(db);
try {
  for (let i = 0; i < endpoints; i++) await addEndpoint(service, `${receiver.url}/${i}`);
  const spec = { ...createSpec(service), connections: 10, warmupS: 0, overallRate: rate };
  await runLoad({ ...spec, durationS: 3 });
  await sleep(3000);
  const { from } = await receiver.reset();
  const receiverPid = receiver.child.pid ?? 0;
  const before = [cpuSeconds(service.pid), databaseCpuSeconds(db.name), cpuSeconds(receiverPid)];
  const load = await runLoad({ ...spec, durationS: seconds });
  const settled = await settle(probe, endpoints > 0 ? receiver : undefined, endpoints, from, 120_000, 100);
  if (settled.detail) throw new Error(settled.detail);
  const [service_ms, postgres_ms, receiver_ms] = [
    cpuSeconds(service.pid),
    databaseCpuSeconds(db.name),
    cpuSeconds(receiverPid),
  ].map((after, i) => ((after - (before[i] ?? 0)) * 1000) / load.ok);
  const lags = (await receiver.lags()).sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      endpoints,
      creates: load.ok,
      errors: load.errors,
      deliveries: lags.length,
      cpu_ms_per_create: {
        service: service_ms?.toFixed(3),
        postgres: postgres_ms?.toFixed(3),
        receiver: receiver_ms?.toFixed(3),
      },
      lag_ms: { p50: quantile(lags, 0.5), p99: quantile(lags, 0.99) },
    }),
  );
} finally {
  await probe.close();
  await service.stop();
  await receiver.stop();
  await db.drop();
}
