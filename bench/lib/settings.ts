/** The bench's knobs, read once from the environment (all optional), and the record of them a report keeps. */

function number(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`${name} must be a non-negative number, not ${text}`);
  return value;
}

/** A database the service can run on. */
export type DbKind = 'postgres' | 'embedded';

function readDbs(env: NodeJS.ProcessEnv): DbKind[] {
  const list = (env.BENCH_READ_DB || 'postgres,embedded').split(',').map((s) => s.trim());
  const bad = list.filter((s) => s !== 'postgres' && s !== 'embedded');
  if (bad.length > 0 || list.length === 0) {
    throw new Error(`BENCH_READ_DB must list postgres and/or embedded, not ${bad.join(',')}`);
  }
  return [...new Set(list as DbKind[])];
}

/** The checkout whose service is measured, when BENCH_SERVICE_DIR names another one. */
export const serviceDirOf = (env: NodeJS.ProcessEnv): string | undefined =>
  env.BENCH_SERVICE_DIR || undefined;

/** Node arguments of every service under test (BENCH_NODE_ARGS, split at spaces: V8 flags to compare). */
export const nodeArgsOf = (env: NodeJS.ProcessEnv): string[] =>
  (env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);

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
  /** Seconds of the WAV and MP4 of the analysis speed rows. */
  analysisShortS: number;
  /** Seconds of the stereo WAV of the analysis memory row. */
  analysisLongS: number;
  /** When set, the service children write CPU profiles here. */
  cpuProfileDir: string | undefined;
  /** When set, the checkout whose service is measured (BENCH_SERVICE_DIR). */
  serviceDir: string | undefined;
  /** Node arguments of the services under test (BENCH_NODE_ARGS). */
  nodeArgs: string[];
}

/** The default PostgreSQL server of the bench. */
const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** Reads the settings from `env` (`process.env` unless given). */
export function readSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  return {
    durationS: number(env, 'BENCH_DURATION', 10),
    warmupS: number(env, 'BENCH_WARMUP', 2),
    rounds: Math.max(1, Math.round(number(env, 'BENCH_ROUNDS', 2))),
    connections: number(env, 'BENCH_CONNECTIONS', 10),
    postgresUrl: env.BENCH_DATABASE_URL || DEFAULT_POSTGRES_URL,
    growthRows: number(env, 'BENCH_GROWTH_ROWS', 1_000_000),
    growthBaseRows: number(env, 'BENCH_GROWTH_BASE_ROWS', 10_000),
    growthConnections: Math.max(1, Math.round(number(env, 'BENCH_GROWTH_CONNECTIONS', 1))),
    uploadBytes: number(env, 'BENCH_UPLOAD_BYTES', 200_000_000),
    uploads: number(env, 'BENCH_UPLOADS', 3),
    listRows: number(env, 'BENCH_LIST_ROWS', 1_000_000),
    downloadBytes: number(env, 'BENCH_DOWNLOAD_BYTES', 200_000_000),
    downloads: number(env, 'BENCH_DOWNLOADS', 3),
    readDbs: readDbs(env),
    webhookEndpoints: Math.max(1, Math.round(number(env, 'BENCH_WEBHOOK_ENDPOINTS', 4))),
    analysisShortS: number(env, 'BENCH_ANALYSIS_SHORT_S', 600),
    analysisLongS: number(env, 'BENCH_ANALYSIS_LONG_S', 7200),
    cpuProfileDir: env.BENCH_CPU_PROF || undefined,
    serviceDir: serviceDirOf(env),
    nodeArgs: nodeArgsOf(env),
  };
}

/** A value of the settings' record: what the knob was in effect (null: unset, its default is to do nothing). */
export type SettingValue = number | string | string[] | null;

/** The URL with its password hidden: the record is committed. */
function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(not a URL)';
  }
}

/** Variables the services inherit from the bench's environment that change how they run (V8, malloc). */
const INHERITED = ['NODE_OPTIONS', 'MALLOC_ARENA_MAX'] as const;

/**
 * Every knob of a run by its variable's name, as in effect (defaults included): the BENCH_* settings, the
 * checkout and node arguments of the services, and the variables the services inherit that change them.
 * BENCH_* variables the bench does not read are listed too, as they were set.
 */
export function settingsRecord(env: NodeJS.ProcessEnv = process.env): Record<string, SettingValue> {
  const s = readSettings(env);
  const record: Record<string, SettingValue> = {
    BENCH_DURATION: s.durationS,
    BENCH_WARMUP: s.warmupS,
    BENCH_ROUNDS: s.rounds,
    BENCH_CONNECTIONS: s.connections,
    BENCH_DATABASE_URL: withoutPassword(s.postgresUrl),
    BENCH_GROWTH_ROWS: s.growthRows,
    BENCH_GROWTH_BASE_ROWS: s.growthBaseRows,
    BENCH_GROWTH_CONNECTIONS: s.growthConnections,
    BENCH_UPLOAD_BYTES: s.uploadBytes,
    BENCH_UPLOADS: s.uploads,
    BENCH_LIST_ROWS: s.listRows,
    BENCH_DOWNLOAD_BYTES: s.downloadBytes,
    BENCH_DOWNLOADS: s.downloads,
    BENCH_READ_DB: s.readDbs.join(','),
    BENCH_WEBHOOK_ENDPOINTS: s.webhookEndpoints,
    BENCH_ANALYSIS_SHORT_S: s.analysisShortS,
    BENCH_ANALYSIS_LONG_S: s.analysisLongS,
    BENCH_CPU_PROF: s.cpuProfileDir ?? null,
    BENCH_SERVICE_DIR: s.serviceDir ?? null,
    BENCH_NODE_ARGS: s.nodeArgs,
  };
  for (const name of INHERITED) record[name] = env[name] || null;
  for (const [name, value] of Object.entries(env)) {
    if (name.startsWith('BENCH_') && !(name in record) && value !== undefined) record[name] = value;
  }
  return record;
}

/** Whether a PostgreSQL URL points at this machine (a run elsewhere is another run's conditions). */
function onLoopback(url: string): boolean {
  try {
    return ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url).hostname);
  } catch {
    return false;
  }
}

/**
 * The knobs of `record` that differ from their defaults (none: a run with the default settings). The
 * database URL counts only when it leaves this machine (another user or port on loopback is the same
 * server's conditions); a BENCH_* variable the bench does not read changes nothing.
 */
export function settingsNotDefault(record: Record<string, SettingValue>): string[] {
  const defaults = settingsRecord({});
  return Object.keys(record).filter((name) => {
    if (!(name in defaults)) return false;
    if (name === 'BENCH_DATABASE_URL') return !onLoopback(String(record[name]));
    return JSON.stringify(record[name]) !== JSON.stringify(defaults[name]);
  });
}
