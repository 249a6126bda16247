/** Service configuration: read from the environment once at start, validated against one schema. */
import { isIP } from 'node:net';
import { type Static, Type } from 'typebox';
import { Value } from 'typebox/value';

/**
 * The database's defaults, in one place: the schema below gives them to DB_POOL_MAX and the DB_*_TIMEOUT
 * variables, and `openDatabase` to a caller that passes none (the CLI's tests, a script).
 */
export const DATABASE_DEFAULTS = {
  poolSize: 10,
  connectSeconds: 2,
  statementSeconds: 3,
  idleInTransactionSeconds: 10,
} as const;

/** The shortest signing secret of the embedded storage's URLs, configured or read from DATA_DIR. */
export const MIN_SIGNING_SECRET_LENGTH = 32;

const Integer = (min: number, max: number, fallback: number) =>
  Type.Integer({ minimum: min, maximum: max, default: fallback });

/** The schema of the environment the service reads. Names are the variables' names. */
export const EnvSchema = Type.Object({
  PORT: Integer(0, 65535, 8080),
  HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  DATA_DIR: Type.String({ default: './data', minLength: 1 }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^/]+' })),
  UPLOAD_URL_EXPIRES_IN: Integer(1, 604800, 3600),
  /** Seconds a recording's signed GET URL stays valid (GET /api/v1/calls/{id}/recording). */
  RECORDING_URL_EXPIRES_IN: Integer(1, 604800, 300),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  /** Set to `false` to skip creating the demo company on the first start with an empty database. */
  CQS_BOOTSTRAP: Type.Boolean({ default: true }),
  /** Seconds after which an unfinalized call-handoff record is finalized by the service. */
  HANDOFF_STALE_AFTER: Integer(1, 30 * 24 * 3600, 4 * 3600),
  /** Seconds between two sweeps that finalize stale call-handoff records (worker processes only). */
  HANDOFF_SWEEP_INTERVAL: Integer(1, 3600, 60),
  /** Final call-handoff records kept in memory per process, so polls of them cost no query; 0 turns it off. */
  HANDOFF_CACHE_SIZE: Integer(0, 1_000_000, 10_000),
  /** Partial call-handoff records kept in memory per process until a change is heard; 0 turns it off. */
  HANDOFF_PARTIAL_CACHE_SIZE: Integer(0, 1_000_000, 1_000),
  /** Bytes of JSON each of the two handoff caches (final, partial) may hold at most; 0 turns both off. */
  HANDOFF_CACHE_BYTES: Integer(0, 16 * 1024 * 1024 * 1024, 32 * 1024 * 1024),
  /** Port of the Prometheus metrics server (GET /metrics, on HOST); unset: no metrics. 0: any free port. */
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  /** API keys whose principal is kept in memory per process (forgotten on every change); 0 turns it off. */
  AUTH_CACHE_SIZE: Integer(0, 1_000_000, 10_000),
  /** Secret for signing the embedded storage's upload URLs; generated into DATA_DIR when absent. */
  STORAGE_SIGNING_SECRET: Type.Optional(Type.String({ minLength: MIN_SIGNING_SECRET_LENGTH })),
  STORAGE_BACKEND: Type.Union([Type.Literal('embedded'), Type.Literal('s3')], { default: 'embedded' }),
  S3_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  S3_REGION: Type.String({ default: 'us-east-1' }),
  S3_BUCKET: Type.Optional(Type.String({ minLength: 3 })),
  S3_FORCE_PATH_STYLE: Type.Boolean({ default: false }),
  S3_ACCESS_KEY_ID: Type.Optional(Type.String()),
  S3_SECRET_ACCESS_KEY: Type.Optional(Type.String()),
  /** Seconds an S3 request may take to connect, or then go without a byte, before it fails. */
  S3_TIMEOUT: Integer(1, 3600, 60),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  /** Requests a key may make per RATE_LIMIT_WINDOW seconds; 0 turns rate limiting off. */
  RATE_LIMIT_MAX: Integer(0, 1_000_000, 6000),
  RATE_LIMIT_WINDOW: Integer(1, 3600, 60),
  /** Failed authentications (401) one client address may have per AUTH_FAILURE_WINDOW; then 429. 0: off. */
  AUTH_FAILURE_MAX: Integer(0, 1_000_000, 30),
  AUTH_FAILURE_WINDOW: Integer(1, 86_400, 60),
  /** Maximum size of a JSON request body, in bytes. */
  BODY_LIMIT: Integer(1024, 100 * 1024 * 1024, 5 * 1024 * 1024),
  /** Seconds a client may take to send its request headers (slow clients are dropped after). */
  HEADERS_TIMEOUT: Integer(1, 600, 10),
  /** Bytes per second a request body must average over each MIN_BODY_RATE_WINDOW; slower: dropped. 0: off. */
  MIN_BODY_RATE: Integer(0, 1_000_000_000, 1024),
  MIN_BODY_RATE_WINDOW: Integer(1, 3600, 30),
  /**
   * Proxies whose X-Forwarded-For is believed: comma-separated addresses or CIDR ranges. Empty (the
   * default): the socket's address is the client's, whatever the headers say.
   */
  TRUST_PROXY: Type.Optional(Type.String()),
  /** Seconds a client may take to send a whole request, uploads included. */
  REQUEST_TIMEOUT: Integer(1, 24 * 3600, 900),
  /** Run the job-queue worker in this process. */
  WORKER: Type.Boolean({ default: true }),
  /** Milliseconds between the worker's polls of the job queue (it also wakes when this process enqueues). */
  WORKER_POLL_INTERVAL: Integer(10, 60_000, 500),
  /** Jobs one worker runs at once. */
  WORKER_CONCURRENCY: Integer(1, 64, 2),
  /** Seconds a stopping process waits for its jobs in progress before it closes (they run again elsewhere). */
  SHUTDOWN_TIMEOUT: Integer(0, 3600, 25),
  /** Seconds between sweeps that look for uploaded objects (S3) and expire unused upload URLs. */
  UPLOAD_SWEEP_INTERVAL: Integer(1, 3600, 15),
  /** Seconds after an upload URL expires before an upload with no object is marked expired. */
  UPLOAD_EXPIRY_GRACE: Integer(0, 86_400, 600),
  /** Days events are kept in the event log (decision 27); a cursor older than that is a 410. */
  EVENT_RETENTION_DAYS: Integer(1, 3650, 30),
  /** Allow webhook URLs that are http or resolve to private addresses (a private network, tests on loopback). */
  WEBHOOK_ALLOW_PRIVATE: Type.Boolean({ default: false }),
  /** Seconds before each retry of a failed webhook delivery, comma-separated; after the last, it failed. */
  WEBHOOK_RETRY_SCHEDULE: Type.String({
    default: '5,300,1800,7200,18000,36000,36000',
    pattern: '^\\d+(\\.\\d+)?(,\\d+(\\.\\d+)?)*$',
  }),
  /** Seconds a webhook receiver has to answer. */
  WEBHOOK_TIMEOUT: Integer(1, 120, 15),
  /** Webhook endpoints one worker process sends to at once (each endpoint gets at most one). */
  WEBHOOK_CONCURRENCY: Integer(1, 1024, 32),
  /**
   * Name servers webhook host names are looked up with (`ip` or `ip:port`, `[v6]:port`, comma-separated);
   * the system's when unset. Used for the public-address rule; with WEBHOOK_ALLOW_PRIVATE, the system's lookup.
   */
  WEBHOOK_DNS_SERVERS: Type.Optional(Type.String()),
  /** Webhook endpoints one company may have, enabled or not: each event is sent to each of them. */
  WEBHOOK_ENDPOINTS_MAX: Integer(1, 1000, 20),
  /** Milliseconds between the webhook fan-out's polls (it also wakes on every commit of events). */
  WEBHOOK_POLL_INTERVAL: Integer(50, 60_000, 1000),
  /**
   * PostgreSQL connections one process pools at most (its change listener holds one more). Processes behind
   * one load balancer together must stay under the server's max_connections.
   */
  DB_POOL_MAX: Integer(1, 1000, DATABASE_DEFAULTS.poolSize),
  /** Seconds to connect to PostgreSQL or to wait for a free pooled connection (then 503). */
  DB_CONNECT_TIMEOUT: Integer(1, 600, DATABASE_DEFAULTS.connectSeconds),
  /** Seconds one PostgreSQL statement may run (server-side), or stay unanswered (the connection is dropped). */
  DB_STATEMENT_TIMEOUT: Integer(1, 3600, DATABASE_DEFAULTS.statementSeconds),
  /**
   * Seconds between two heartbeat queries on the PostgreSQL change listener's connection: one unanswered by
   * the next counts as a lost connection (the caches are emptied, and it reconnects).
   */
  DB_LISTEN_HEARTBEAT: Integer(1, 600, 5),
  /** Seconds a PostgreSQL transaction may sit idle before the server ends it. */
  DB_IDLE_IN_TRANSACTION_TIMEOUT: Integer(1, 3600, DATABASE_DEFAULTS.idleInTransactionSeconds),
  /** Seconds an embedded-storage upload may send nothing before it is abandoned. */
  UPLOAD_IDLE_TIMEOUT: Integer(1, 3600, 60),
  /** The ffmpeg that decodes recordings for the analysis; by default the build the npm package brings. */
  FFMPEG_PATH: Type.Optional(Type.String({ minLength: 1 })),
  /**
   * Seconds of a recording analysed and transcribed at most (4 h by default): a longer one's analysis and
   * transcription fail with a reason. Counted on the decoded audio, not the header's claim.
   */
  RECORDING_MAX_SECONDS: Integer(60, 172_800, 14_400),
  /** The engine that transcribes recordings: `none` (calls are not transcribed), `pocketsphinx`, `openai`. */
  TRANSCRIBER: Type.Union(
    ['none', 'pocketsphinx', 'openai'].map((e) => Type.Literal(e)),
    { default: 'none' },
  ),
  /** The `openai` engine's server: its root or `/v1` (requests go to …/v1/audio/transcriptions). */
  TRANSCRIBER_URL: Type.Optional(Type.String({ pattern: '^https?://[^/]+' })),
  /** Bearer key of the `openai` engine's server, when it wants one. */
  TRANSCRIBER_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  /** The model the `openai` engine asks for. */
  TRANSCRIBER_MODEL: Type.String({ default: 'whisper-1', minLength: 1 }),
  /** Engine requests (openai) or recognisers (pocketsphinx) one process runs at once. */
  TRANSCRIBER_CONCURRENCY: Integer(1, 64, 2),
  /** Seconds one engine request (or one pocketsphinx run over a channel) may take. */
  TRANSCRIBER_TIMEOUT: Integer(1, 24 * 3600, 600),
  /** The largest file one `openai` request carries; longer channels are cut in pauses. */
  TRANSCRIBER_MAX_BYTES: Integer(65_536, 1024 * 1024 * 1024, 24 * 1024 * 1024),
});

/** The environment after defaults and conversion. */
export type Env = Static<typeof EnvSchema>;

/** The validated configuration every part of the service receives. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  publicUrl: string;
  uploadUrlExpiresIn: number;
  /** Seconds a recording's signed GET URL is valid. */
  recordingUrlExpiresIn: number;
  logLevel: string;
  bootstrap: boolean;
  handoffStaleAfterSeconds: number;
  handoffSweepIntervalSeconds: number;
  handoffCacheSize: number;
  handoffPartialCacheSize: number;
  handoffCacheBytes: number;
  authCacheSize: number;
  /** METRICS_PORT: where GET /metrics is served; undefined turns metrics off. */
  metricsPort: number | undefined;
  storage: {
    backend: 'embedded' | 's3';
    signingSecret: string | undefined;
    s3: {
      endpoint: string | undefined;
      region: string;
      bucket: string | undefined;
      forcePathStyle: boolean;
      accessKeyId: string | undefined;
      secretAccessKey: string | undefined;
      timeoutMs: number;
    };
  };
  redisUrl: string | undefined;
  rateLimit: { max: number; windowSeconds: number };
  /** Failed authentications per client address and window (seconds); max 0 turns the limit off. */
  authFailures: { max: number; windowSeconds: number };
  bodyLimit: number;
  timeouts: { headersMs: number; requestMs: number };
  /** The floor under a request body's rate; bytesPerSecond 0 turns it off. */
  minBodyRate: { bytesPerSecond: number; windowMs: number };
  /** Fastify's trustProxy: false, or the trusted proxies' addresses and ranges. */
  trustProxy: false | string[];
  /** PostgreSQL time limits: a request answers 503 within connectMs + statementMs when the database is silent. */
  databaseTimeouts: { connectMs: number; statementMs: number; idleInTransactionMs: number };
  /** Milliseconds between two heartbeats of the PostgreSQL change listener (DB_LISTEN_HEARTBEAT). */
  listenHeartbeatMs: number;
  /** PostgreSQL connections this process pools at most (DB_POOL_MAX). */
  databasePoolSize: number;
  worker: boolean;
  workerPollIntervalMs: number;
  workerConcurrency: number;
  /** SHUTDOWN_TIMEOUT in milliseconds: how long a stop waits for the jobs in progress. */
  shutdownTimeoutMs: number;
  uploads: { sweepIntervalSeconds: number; expiryGraceSeconds: number; idleTimeoutSeconds: number };
  events: { retentionDays: number };
  webhooks: {
    allowPrivate: boolean;
    retrySchedule: number[];
    timeoutMs: number;
    concurrency: number;
    pollIntervalMs: number;
    /** WEBHOOK_ENDPOINTS_MAX: endpoints one company may have. */
    maxEndpoints: number;
    /** WEBHOOK_DNS_SERVERS, split; empty for the system's name servers. */
    dnsServers: string[];
  };
  /** FFMPEG_PATH, when set. */
  ffmpegPath: string | undefined;
  /** RECORDING_MAX_SECONDS: the longest recording analysed and transcribed. */
  recordingMaxSeconds: number;
  /** The transcription engine (decision 29); `none` transcribes nothing. */
  transcriber: {
    engine: 'none' | 'pocketsphinx' | 'openai';
    /** Set whenever the engine is `openai`. */
    url: string | undefined;
    apiKey: string | undefined;
    model: string;
    concurrency: number;
    timeoutMs: number;
    maxBytes: number;
  };
}

/** Thrown when the environment does not fit the schema; the message names every bad variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const BOOLEAN_WORDS: Record<string, boolean> = {
  true: true,
  '1': true,
  yes: true,
  false: false,
  '0': false,
  no: false,
};

/** TRUST_PROXY's text as Fastify's trustProxy; a ConfigError names a part that is no address or range. */
function parseTrustProxy(text: string): false | string[] {
  const value = text.trim();
  if (value === '') return false;
  const parts = value.split(',').map((p) => p.trim());
  for (const part of parts) {
    const [address = '', prefix, ...rest] = part.split('/');
    const family = isIP(address);
    const okPrefix =
      prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
    if (family === 0 || !okPrefix || rest.length > 0) {
      throw new ConfigError(
        `invalid configuration:\n  TRUST_PROXY=${JSON.stringify(text)}: "${part}" is not an IP address or CIDR range`,
      );
    }
  }
  return parts;
}

/** WEBHOOK_DNS_SERVERS's text as a list; a ConfigError names a part that is no address (with a port). */
function parseDnsServers(text: string): string[] {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  for (const part of parts) {
    const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(part);
    const plain = /^([^:]+)(?::(\d{1,5}))?$/.exec(part);
    const address = bracketed?.[1] ?? (isIP(part) === 6 ? part : plain?.[1]) ?? '';
    const port = Number(bracketed?.[2] ?? (isIP(part) === 6 ? undefined : plain?.[2]) ?? 53);
    if (isIP(address) === 0 || port < 1 || port > 65535) {
      throw new ConfigError(
        `invalid configuration:\n  WEBHOOK_DNS_SERVERS=${JSON.stringify(text)}: "${part}" is not an IP address with an optional port`,
      );
    }
  }
  return parts;
}

/** Variables whose whole value is a secret: a message about them never shows it. */
const SECRET_VARIABLES = new Set(['STORAGE_SIGNING_SECRET', 'S3_SECRET_ACCESS_KEY', 'TRANSCRIBER_API_KEY']);

/**
 * A variable's value as a configuration error may show it: a secret's length only, and a URL without the
 * password its user part may carry (DATABASE_URL, REDIS_URL). The message goes to a terminal or a log.
 */
function shown(name: string, text: string): string {
  if (SECRET_VARIABLES.has(name)) return `(${text.length} characters, not shown)`;
  return JSON.stringify(text.replace(/^((?:[a-z][a-z0-9+.-]*:\/\/)?[^:/?#@]*):[^@/?#]*@/i, '$1:***@'));
}

/** Validates `env` (normally `process.env`) and returns the configuration, or throws a ConfigError. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const raw: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, schema] of Object.entries(EnvSchema.properties)) {
    const text = env[name];
    if (text === undefined || text === '') continue;
    const type = (schema as { type?: string }).type;
    if (type === 'integer') {
      raw[name] = /^-?\d+$/.test(text.trim()) ? Number(text) : text;
    } else if (type === 'boolean') {
      const word = BOOLEAN_WORDS[text.trim().toLowerCase()];
      raw[name] = word ?? text;
    } else {
      raw[name] = text;
    }
  }
  const value = Value.Default(EnvSchema, raw) as Record<string, unknown>;
  // Each variable is checked on its own: TypeBox stops listing errors after a few, and every bad
  // variable should be named at once.
  for (const [name, schema] of Object.entries(EnvSchema.properties)) {
    if (value[name] === undefined) continue;
    if (Value.Check(schema, value[name])) continue;
    const allowed = (schema as { anyOf?: { const?: unknown }[] }).anyOf?.map((s) => s.const);
    const first = Value.Errors(schema, value[name])[0];
    const message = allowed ? `must be one of ${allowed.join(', ')}` : (first?.message ?? 'is invalid');
    problems.push(`${name}=${shown(name, env[name] ?? '')}: ${message}`);
  }
  if (problems.length > 0) {
    throw new ConfigError(`invalid configuration:\n  ${[...new Set(problems)].join('\n  ')}`);
  }
  const e = value as Env;
  if (e.STORAGE_BACKEND === 's3' && !e.S3_BUCKET) {
    throw new ConfigError('invalid configuration:\n  S3_BUCKET: required when STORAGE_BACKEND=s3');
  }
  if (e.TRANSCRIBER === 'openai' && !e.TRANSCRIBER_URL) {
    throw new ConfigError('invalid configuration:\n  TRANSCRIBER_URL: required when TRANSCRIBER=openai');
  }
  const trustProxy = parseTrustProxy(e.TRUST_PROXY ?? '');
  const dnsServers = parseDnsServers(e.WEBHOOK_DNS_SERVERS ?? '');
  const host = e.HOST;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return {
    port: e.PORT,
    host,
    dataDir: e.DATA_DIR,
    databaseUrl: e.DATABASE_URL,
    publicUrl: (e.PUBLIC_URL ?? `http://${shownHost}:${e.PORT}`).replace(/\/+$/, ''),
    uploadUrlExpiresIn: e.UPLOAD_URL_EXPIRES_IN,
    recordingUrlExpiresIn: e.RECORDING_URL_EXPIRES_IN,
    logLevel: e.LOG_LEVEL,
    bootstrap: e.CQS_BOOTSTRAP,
    handoffStaleAfterSeconds: e.HANDOFF_STALE_AFTER,
    handoffSweepIntervalSeconds: e.HANDOFF_SWEEP_INTERVAL,
    handoffCacheSize: e.HANDOFF_CACHE_SIZE,
    handoffPartialCacheSize: e.HANDOFF_PARTIAL_CACHE_SIZE,
    handoffCacheBytes: e.HANDOFF_CACHE_BYTES,
    authCacheSize: e.AUTH_CACHE_SIZE,
    metricsPort: e.METRICS_PORT,
    storage: {
      backend: e.STORAGE_BACKEND,
      signingSecret: e.STORAGE_SIGNING_SECRET,
      s3: {
        endpoint: e.S3_ENDPOINT,
        region: e.S3_REGION,
        bucket: e.S3_BUCKET,
        forcePathStyle: e.S3_FORCE_PATH_STYLE,
        accessKeyId: e.S3_ACCESS_KEY_ID,
        secretAccessKey: e.S3_SECRET_ACCESS_KEY,
        timeoutMs: e.S3_TIMEOUT * 1000,
      },
    },
    redisUrl: e.REDIS_URL,
    rateLimit: { max: e.RATE_LIMIT_MAX, windowSeconds: e.RATE_LIMIT_WINDOW },
    authFailures: { max: e.AUTH_FAILURE_MAX, windowSeconds: e.AUTH_FAILURE_WINDOW },
    bodyLimit: e.BODY_LIMIT,
    timeouts: { headersMs: e.HEADERS_TIMEOUT * 1000, requestMs: e.REQUEST_TIMEOUT * 1000 },
    minBodyRate: { bytesPerSecond: e.MIN_BODY_RATE, windowMs: e.MIN_BODY_RATE_WINDOW * 1000 },
    trustProxy,
    databaseTimeouts: {
      connectMs: e.DB_CONNECT_TIMEOUT * 1000,
      statementMs: e.DB_STATEMENT_TIMEOUT * 1000,
      idleInTransactionMs: e.DB_IDLE_IN_TRANSACTION_TIMEOUT * 1000,
    },
    databasePoolSize: e.DB_POOL_MAX,
    listenHeartbeatMs: e.DB_LISTEN_HEARTBEAT * 1000,
    worker: e.WORKER,
    workerPollIntervalMs: e.WORKER_POLL_INTERVAL,
    workerConcurrency: e.WORKER_CONCURRENCY,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT * 1000,
    ffmpegPath: e.FFMPEG_PATH,
    recordingMaxSeconds: e.RECORDING_MAX_SECONDS,
    transcriber: {
      engine: e.TRANSCRIBER as Config['transcriber']['engine'],
      url: e.TRANSCRIBER_URL,
      apiKey: e.TRANSCRIBER_API_KEY,
      model: e.TRANSCRIBER_MODEL,
      concurrency: e.TRANSCRIBER_CONCURRENCY,
      timeoutMs: e.TRANSCRIBER_TIMEOUT * 1000,
      maxBytes: e.TRANSCRIBER_MAX_BYTES,
    },
    uploads: {
      sweepIntervalSeconds: e.UPLOAD_SWEEP_INTERVAL,
      expiryGraceSeconds: e.UPLOAD_EXPIRY_GRACE,
      idleTimeoutSeconds: e.UPLOAD_IDLE_TIMEOUT,
    },
    events: { retentionDays: e.EVENT_RETENTION_DAYS },
    webhooks: {
      allowPrivate: e.WEBHOOK_ALLOW_PRIVATE,
      retrySchedule: e.WEBHOOK_RETRY_SCHEDULE.split(',').map(Number),
      timeoutMs: e.WEBHOOK_TIMEOUT * 1000,
      concurrency: e.WEBHOOK_CONCURRENCY,
      pollIntervalMs: e.WEBHOOK_POLL_INTERVAL,
      maxEndpoints: e.WEBHOOK_ENDPOINTS_MAX,
      dnsServers,
    },
  };
}
