/**
 * Load phases with autocannon. Every response is checked (status and body); only checked responses count
 * as throughput and only their latencies (kept at full resolution, not autocannon's whole milliseconds)
 * make the percentiles. Anything else — a wrong answer, a refused connection, a timeout — is an error.
 */
import autocannon from 'autocannon';

/** Judges one response: true when it is the answer the scenario expects. */
export type ResponseCheck = (status: number, body: string, headers: Record<string, unknown>) => boolean;

/** One load phase. */
export interface LoadSpec {
  /** Base URL, such as http://127.0.0.1:8080. */
  url: string;
  path: string;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH';
  headers?: Record<string, string>;
  /** Makes each request's body (so each can carry a fresh id) and its own check. */
  request?: () => { body: string; check: ResponseCheck };
  /** The check of bodiless requests. */
  check?: ResponseCheck;
  connections: number;
  durationS: number;
  warmupS: number;
  /** Requests per second over all connections; unlimited when omitted. */
  overallRate?: number;
}

/** What a phase measured. */
export interface LoadResult {
  /** Checked responses per second. */
  rps: number;
  p50_ms: number;
  p99_ms: number;
  ok: number;
  /** Failed checks, connection errors and timeouts. */
  errors: number;
  durationS: number;
  /** The first failed response, to say what went wrong. */
  firstFailure: string | undefined;
}

/** The q-quantile (0..1) of sorted values, nearest rank. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] as number;
}

interface Context {
  check?: ResponseCheck;
}

/** The raw outcome of one stretch of load. */
export interface RawPhase {
  ok: number;
  errors: number;
  durationS: number;
  /** Latencies (ms) of the checked responses. */
  latencies: number[];
  firstFailure: string | undefined;
}

/** Runs `spec` for `durationS` seconds (no warm-up). */
export async function runPhase(spec: LoadSpec, durationS: number): Promise<RawPhase> {
  const latencies: number[] = [];
  let ok = 0;
  let failed = 0;
  let firstFailure: string | undefined;
  let lastOk = false;
  const judge = (check: ResponseCheck | undefined, status: number, body: string, headers: object) => {
    lastOk = check ? check(status, body, headers as Record<string, unknown>) : status < 300;
    if (lastOk) ok++;
    else {
      failed++;
      firstFailure ??= `${status} ${body.slice(0, 300)}`;
    }
  };
  const makeRequest = spec.request;
  const request: autocannon.Request = {
    method: spec.method ?? 'GET',
    path: spec.path,
    headers: spec.headers ?? {},
    ...(makeRequest
      ? {
          setupRequest: (req: autocannon.Request, context: object) => {
            const made = makeRequest();
            (context as Context).check = made.check;
            return { ...req, body: made.body };
          },
        }
      : {}),
    onResponse: (status, body, context, headers) =>
      judge(makeRequest ? (context as Context).check : spec.check, status, body, headers ?? {}),
  };
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        duration: durationS,
        requests: [request],
        excludeErrorStats: true,
        ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
      },
      (error, done) => (error ? reject(error) : resolve(done)),
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => {
      if (lastOk) latencies.push(responseTime);
    });
  });
  if (result.errors > 0) firstFailure ??= `${result.errors} connection errors (${result.timeouts} timeouts)`;
  return { ok, errors: failed + result.errors, durationS: result.duration, latencies, firstFailure };
}

/** Adds up stretches of load of one side into its result. */
export function summarize(phases: RawPhase[]): LoadResult {
  const latencies = phases.flatMap((p) => p.latencies).sort((a, b) => a - b);
  const ok = phases.reduce((n, p) => n + p.ok, 0);
  const durationS = phases.reduce((n, p) => n + p.durationS, 0);
  return {
    rps: durationS > 0 ? ok / durationS : 0,
    p50_ms: quantile(latencies, 0.5),
    p99_ms: quantile(latencies, 0.99),
    ok,
    errors: phases.reduce((n, p) => n + p.errors, 0),
    durationS,
    firstFailure: phases.find((p) => p.firstFailure)?.firstFailure,
  };
}

/** Runs a discarded warm-up; throws when not one answer in it was right. */
export async function warmUp(spec: LoadSpec): Promise<void> {
  if (spec.warmupS <= 0) return;
  const warm = await runPhase(spec, spec.warmupS);
  if (warm.ok === 0) throw new Error(`no correct answer during warm-up: ${warm.firstFailure}`);
}

/** Runs a warm-up (discarded) and then the measured phase. */
export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  await warmUp(spec);
  return summarize([await runPhase(spec, spec.durationS)]);
}
