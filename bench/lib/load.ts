/**
 * Load phases with autocannon. Every response is checked (status and body); only checked responses count
 * as throughput and only their latencies (kept at full resolution, not autocannon's whole milliseconds)
 * make the percentiles. Anything else — a wrong answer, a refused connection, a timeout — is an error.
 */
import { Agent, request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
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
  /**
   * Requests per second over all connections, sent evenly spread (one every 1/rate s); unlimited when
   * omitted.
   */
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

/** Sends one request of `spec` on `agent`; answers its status, body and headers. */
function sendOnce(
  spec: LoadSpec,
  agent: Agent,
  body: string | undefined,
): Promise<{ status: number; body: string; headers: object }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      new URL(spec.path, spec.url),
      { method: spec.method ?? 'GET', headers: spec.headers ?? {}, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString(),
            headers: res.headers,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Runs `spec` at `spec.overallRate` requests per second for `durationS`, one request every 1/rate seconds
 * on up to `spec.connections` connections. Not autocannon's rate: it sends each second's requests at once
 * at the start of the second, a burst at ten times the rate or more, and then waits.
 */
async function runPacedPhase(spec: LoadSpec, rate: number, durationS: number): Promise<RawPhase> {
  const agent = new Agent({ keepAlive: true, maxSockets: spec.connections });
  const latencies: number[] = [];
  let ok = 0;
  let errors = 0;
  let firstFailure: string | undefined;
  const one = async () => {
    const made = spec.request?.();
    const started = performance.now();
    try {
      const res = await sendOnce(spec, agent, made?.body);
      const check = made?.check ?? spec.check;
      if (check ? check(res.status, res.body, res.headers as Record<string, unknown>) : res.status < 300) {
        ok++;
        latencies.push(performance.now() - started);
      } else {
        errors++;
        firstFailure ??= `${res.status} ${res.body.slice(0, 300)}`;
      }
    } catch (error) {
      errors++;
      firstFailure ??= String(error);
    }
  };
  const started = performance.now();
  const sent: Promise<void>[] = [];
  for (let i = 0; i < Math.floor(durationS * rate); i++) {
    const wait = started + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    sent.push(one());
  }
  await Promise.all(sent);
  agent.destroy();
  return { ok, errors, durationS: (performance.now() - started) / 1000, latencies, firstFailure };
}

/** Runs `spec` for `durationS` seconds (no warm-up). */
export async function runPhase(spec: LoadSpec, durationS: number): Promise<RawPhase> {
  if (spec.overallRate) return runPacedPhase(spec, spec.overallRate, durationS);
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
