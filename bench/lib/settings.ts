/** The bench's knobs, read once from the environment (all optional). */

function number(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`${name} must be a non-negative number, not ${text}`);
  return value;
}

/** A database the service can run on. */
export type DbKind = 'postgres' | 'embedded';

function readDbs(): DbKind[] {
  const list = (process.env.BENCH_READ_DB || 'postgres,embedded').split(',').map((s) => s.trim());
  const bad = list.filter((s) => s !== 'postgres' && s !== 'embedded');
  if (bad.length > 0 || list.length === 0) {
    throw new Error(`BENCH_READ_DB must list postgres and/or embedded, not ${bad.join(',')}`);
  }
  return [...new Set(list as DbKind[])];
}

/** Everything a run can be tuned with. */
export interface Settings {
  /** Seconds of each measured load phase. */
  durationS: number;
  /** Slices each side's phase is cut into, alternating between the sides of a comparison. */
  rounds: number;
  /** Seconds of the discarded warm-up before each phase. */
  warmupS: number;
  /** Concurrent connections of each load phase. */
  connections: number;
  /** A PostgreSQL URL whose user may create and drop databases. */
  postgresUrl: string;
  /** Rows stored before the second growth phase (1 million by default). */
  growthRows: number;
  /** Rows stored before the first growth phase. */
  growthBaseRows: number;
  /** Connections of the growth phases: 1 sends requests back to back, so latency is cost, not queueing. */
  growthConnections: number;
  /** Bytes of each upload of the upload scenario. */
  uploadBytes: number;
  /** Sequential uploads per side of the upload scenario. */
  uploads: number;
  /** Calls stored for the list scenario, and events for the event feed's (1 million by default). */
  listRows: number;
  /** Bytes of the recording of the download scenario. */
  downloadBytes: number;
  /** Sequential downloads per side of the download scenario. */
  downloads: number;
  /** The databases of the read scenarios (product/list, handoff GET), each measured. */
  readDbs: DbKind[];
  /** Webhook endpoints (all on one local receiver) of the delivery phase of the webhooks scenario. */
  webhookEndpoints: number;
  /** When set, the service children write CPU profiles here. */
  cpuProfileDir: string | undefined;
}

/** Reads the settings from `process.env`. */
export function readSettings(): Settings {
  return {
    durationS: number('BENCH_DURATION', 10),
    warmupS: number('BENCH_WARMUP', 2),
    rounds: Math.max(1, Math.round(number('BENCH_ROUNDS', 2))),
    connections: number('BENCH_CONNECTIONS', 10),
    postgresUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
    growthRows: number('BENCH_GROWTH_ROWS', 1_000_000),
    growthBaseRows: number('BENCH_GROWTH_BASE_ROWS', 10_000),
    growthConnections: Math.max(1, Math.round(number('BENCH_GROWTH_CONNECTIONS', 1))),
    uploadBytes: number('BENCH_UPLOAD_BYTES', 200_000_000),
    uploads: number('BENCH_UPLOADS', 3),
    listRows: number('BENCH_LIST_ROWS', 1_000_000),
    downloadBytes: number('BENCH_DOWNLOAD_BYTES', 200_000_000),
    downloads: number('BENCH_DOWNLOADS', 3),
    readDbs: readDbs(),
    webhookEndpoints: Math.max(1, Math.round(number('BENCH_WEBHOOK_ENDPOINTS', 4))),
    cpuProfileDir: process.env.BENCH_CPU_PROF || undefined,
  };
}
