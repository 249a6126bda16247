/**
 * Log settings: a request id on every line, and never a secret. Redaction is by field, not by pattern:
 * a request is logged as its path and the names of its query parameters (decoded, never their values, so
 * `?api%5Fkey=` or `?X%2DCqs%2DSignature=` cannot slip through), and an error as a fixed set of fields
 * (never a driver's query parameters, which hold key hashes during an outage).
 */
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';

/** The path of a URL and the decoded names of its query parameters, without any value. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const names = new Set<string>();
  for (const name of new URLSearchParams(url.slice(q + 1)).keys()) names.add(name);
  const list = [...names].map((n) => encodeURIComponent(n)).join('&');
  return list ? `${url.slice(0, q)}?${list}` : url.slice(0, q);
}

/** Fields of an error that may be logged, whatever the error is; its own message only when it is safe. */
interface LoggedError {
  [field: string]: unknown;
  type: string;
  message: string;
  stack: string;
  code?: string;
  cause?: LoggedError;
}

/**
 * An error as logged: type, code, message and stack frames, and its cause likewise. A failed query
 * (Drizzle's error, which has `query` and `params`) is logged with its SQL text, which has placeholders
 * only; its message and stack, which repeat the parameters, are not. Driver fields (`detail`, `where`,
 * `params`, …) are never logged.
 */
export function serializeError(error: unknown, depth = 0): LoggedError {
  if (!(error instanceof Object)) return { type: typeof error, message: String(error), stack: '' };
  const e = error as { name?: unknown; message?: unknown; code?: unknown; stack?: unknown; cause?: unknown };
  const query = (error as { query?: unknown }).query;
  const failedQuery = typeof query === 'string' && 'params' in error;
  const type = typeof e.name === 'string' ? e.name : (error.constructor?.name ?? 'Error');
  const message = failedQuery
    ? `query failed: ${String(query).slice(0, 500)}`
    : typeof e.message === 'string'
      ? e.message
      : '';
  const out: LoggedError = { type, message, stack: '' };
  if (typeof e.code === 'string' || typeof e.code === 'number') out.code = String(e.code);
  if (typeof e.stack === 'string') {
    // The first lines of a stack repeat the message; only the frames are kept.
    const frames = e.stack.indexOf('\n    at ');
    if (frames >= 0) out.stack = `${type}: ${message}${e.stack.slice(frames)}`;
  }
  if (e.cause !== undefined && depth < 3) out.cause = serializeError(e.cause, depth + 1);
  return out;
}

type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';
type LogArgs = Parameters<FastifyBaseLogger['info']>;
/** The app's logger is pino's, which answers whether it writes a level (Fastify's type leaves that out). */
type PinoLogger = FastifyBaseLogger & { isLevelEnabled(level: LogLevel): boolean };

/**
 * A request's logger that makes its pino child (with the request id) only when a line is written at a level
 * the parent writes. Fastify makes a child per request, and pino's child costs about 1 µs (it serializes its
 * bindings at once): at the usual levels most requests write nothing, and that was a fiftieth of a cached
 * handoff read.
 */
class LazyRequestLogger implements FastifyBaseLogger {
  readonly #parent: PinoLogger;
  readonly #bindings: Record<string, unknown>;
  #child: PinoLogger | undefined;

  constructor(parent: PinoLogger, bindings: Record<string, unknown>) {
    this.#parent = parent;
    this.#bindings = bindings;
  }

  #made(): PinoLogger {
    this.#child ??= this.#parent.child(this.#bindings) as PinoLogger;
    return this.#child;
  }

  #write(level: LogLevel, args: LogArgs): void {
    if (!(this.#child ?? this.#parent).isLevelEnabled(level)) return;
    const child = this.#made();
    Reflect.apply(child[level], child, args);
  }

  get level(): string {
    return (this.#child ?? this.#parent).level;
  }
  set level(level: string) {
    this.#made().level = level;
  }
  trace(...args: LogArgs): void {
    this.#write('trace', args);
  }
  debug(...args: LogArgs): void {
    this.#write('debug', args);
  }
  info(...args: LogArgs): void {
    this.#write('info', args);
  }
  warn(...args: LogArgs): void {
    this.#write('warn', args);
  }
  error(...args: LogArgs): void {
    this.#write('error', args);
  }
  fatal(...args: LogArgs): void {
    this.#write('fatal', args);
  }
  silent(): void {}
  child(bindings: Record<string, unknown>, options?: Parameters<FastifyBaseLogger['child']>[1]) {
    return this.#made().child(bindings, options);
  }
}

/**
 * Fastify's `childLoggerFactory`: a lazy child per request. A route with a log level or serializers of its
 * own (none has one now) gets pino's child at once, with them.
 */
export function requestLogger(
  parent: FastifyBaseLogger,
  bindings: Record<string, unknown>,
  options: Parameters<FastifyBaseLogger['child']>[1],
): FastifyBaseLogger {
  if (options && Object.keys(options).length > 0) return parent.child(bindings, options);
  return new LazyRequestLogger(parent as PinoLogger, bindings);
}

/** The logger options of the app. `stream` lets tests read the log. */
export function loggerOptions(level: string, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level,
    ...(stream ? { stream } : {}),
    redact: { paths: ['req.headers.authorization'], censor: '[redacted]' },
    serializers: {
      req(request: { method: string; url: string; id?: string; ip?: string }) {
        return { method: request.method, url: redactUrl(request.url), remoteAddress: request.ip };
      },
      err: serializeError,
    },
  };
}
