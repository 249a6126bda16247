/** Service configuration: read from the environment once at start, validated against one schema. */
import { type Static, Type } from 'typebox';
import { Value } from 'typebox/value';

const Integer = (min: number, max: number, fallback: number) =>
  Type.Integer({ minimum: min, maximum: max, default: fallback });

/** The schema of the environment the service reads. Names are the variables' names. */
export const EnvSchema = Type.Object({
  PORT: Integer(0, 65535, 8080),
  HOST: Type.String({ default: '0.0.0.0', minLength: 1 }),
  DATA_DIR: Type.String({ default: './data', minLength: 1 }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^/]+' })),
  UPLOAD_URL_EXPIRES_IN: Integer(1, 604800, 3600),
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
  /** Secret for signing the embedded storage's upload URLs; generated into DATA_DIR when absent. */
  STORAGE_SIGNING_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  STORAGE_BACKEND: Type.Union([Type.Literal('embedded'), Type.Literal('s3')], { default: 'embedded' }),
  S3_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  S3_REGION: Type.String({ default: 'us-east-1' }),
  S3_BUCKET: Type.Optional(Type.String({ minLength: 3 })),
  S3_FORCE_PATH_STYLE: Type.Boolean({ default: false }),
  S3_ACCESS_KEY_ID: Type.Optional(Type.String()),
  S3_SECRET_ACCESS_KEY: Type.Optional(Type.String()),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  /** Requests a key may make per RATE_LIMIT_WINDOW seconds; 0 turns rate limiting off. */
  RATE_LIMIT_MAX: Integer(0, 1_000_000, 6000),
  RATE_LIMIT_WINDOW: Integer(1, 3600, 60),
  /** Maximum size of a JSON request body, in bytes. */
  BODY_LIMIT: Integer(1024, 100 * 1024 * 1024, 5 * 1024 * 1024),
  /** Seconds a client may take to send its request headers (slow clients are dropped after). */
  HEADERS_TIMEOUT: Integer(1, 600, 10),
  /** Seconds a client may take to send a whole request, uploads included. */
  REQUEST_TIMEOUT: Integer(1, 24 * 3600, 900),
  /** Run the job-queue worker in this process. */
  WORKER: Type.Boolean({ default: true }),
  /** Milliseconds between the worker's polls of the job queue (it also wakes when this process enqueues). */
  WORKER_POLL_INTERVAL: Integer(10, 60_000, 500),
  /** Jobs one worker runs at once. */
  WORKER_CONCURRENCY: Integer(1, 64, 2),
  /** Seconds between sweeps that look for uploaded objects (S3) and expire unused upload URLs. */
  UPLOAD_SWEEP_INTERVAL: Integer(1, 3600, 15),
  /** Seconds after an upload URL expires before an upload with no object is marked expired. */
  UPLOAD_EXPIRY_GRACE: Integer(0, 86_400, 600),
  /** Seconds an embedded-storage upload may send nothing before it is abandoned. */
  UPLOAD_IDLE_TIMEOUT: Integer(1, 3600, 60),
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
  logLevel: string;
  bootstrap: boolean;
  handoffStaleAfterSeconds: number;
  handoffSweepIntervalSeconds: number;
  handoffCacheSize: number;
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
    };
  };
  redisUrl: string | undefined;
  rateLimit: { max: number; windowSeconds: number };
  bodyLimit: number;
  timeouts: { headersMs: number; requestMs: number };
  worker: boolean;
  workerPollIntervalMs: number;
  workerConcurrency: number;
  uploads: { sweepIntervalSeconds: number; expiryGraceSeconds: number; idleTimeoutSeconds: number };
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
    problems.push(`${name}=${JSON.stringify(env[name] ?? '')}: ${message}`);
  }
  if (problems.length > 0) {
    throw new ConfigError(`invalid configuration:\n  ${[...new Set(problems)].join('\n  ')}`);
  }
  const e = value as Env;
  if (e.STORAGE_BACKEND === 's3' && !e.S3_BUCKET) {
    throw new ConfigError('invalid configuration:\n  S3_BUCKET: required when STORAGE_BACKEND=s3');
  }
  const host = e.HOST;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return {
    port: e.PORT,
    host,
    dataDir: e.DATA_DIR,
    databaseUrl: e.DATABASE_URL,
    publicUrl: (e.PUBLIC_URL ?? `http://${shownHost}:${e.PORT}`).replace(/\/+$/, ''),
    uploadUrlExpiresIn: e.UPLOAD_URL_EXPIRES_IN,
    logLevel: e.LOG_LEVEL,
    bootstrap: e.CQS_BOOTSTRAP,
    handoffStaleAfterSeconds: e.HANDOFF_STALE_AFTER,
    handoffSweepIntervalSeconds: e.HANDOFF_SWEEP_INTERVAL,
    handoffCacheSize: e.HANDOFF_CACHE_SIZE,
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
      },
    },
    redisUrl: e.REDIS_URL,
    rateLimit: { max: e.RATE_LIMIT_MAX, windowSeconds: e.RATE_LIMIT_WINDOW },
    bodyLimit: e.BODY_LIMIT,
    timeouts: { headersMs: e.HEADERS_TIMEOUT * 1000, requestMs: e.REQUEST_TIMEOUT * 1000 },
    worker: e.WORKER,
    workerPollIntervalMs: e.WORKER_POLL_INTERVAL,
    workerConcurrency: e.WORKER_CONCURRENCY,
    uploads: {
      sweepIntervalSeconds: e.UPLOAD_SWEEP_INTERVAL,
      expiryGraceSeconds: e.UPLOAD_EXPIRY_GRACE,
      idleTimeoutSeconds: e.UPLOAD_IDLE_TIMEOUT,
    },
  };
}
