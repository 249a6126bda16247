/**
 * Load phases with autocannon. Every response is checked (status and body); only checked responses count
 * as throughput and only their latencies (kept at full resolution, not autocannon's whole milliseconds)
 * make the percentiles. Anything else — a wrong answer, a check that throws (a body that is not JSON), a
 * refused connection, a timeout, a request lost on a connection the server closed without answering it —
 * is an error.
 */
import { Agent, request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';

/** Judges one response: true when it is the answer the scenario expects. */
export type ResponseCheck = (status: number, body: string, headers: Record<string, unknown>) => boolean;

/** Seconds after which a request of the paced runner is abandoned and counted as an error (autocannon's too). */
export const REQUEST_TIMEOUT_S = 10;

/**
 * Runs `check` (the status alone when there is none); a check that throws (JSON.parse of a body that is not
 * JSON) judges the answer wrong instead of ending the run. Answers whether it passed and, when not, why.
 */
function runCheck(
  check: ResponseCheck | undefined,
  status: number,
  body: string,
  headers: object,
): { ok: boolean; why?: string } {
  try {
    return { ok: check ? check(status, body, headers as Record<string, unknown>) : status < 300 };
  } catch (error) {
    return { ok: false, why: `the check threw ${String(error)}` };
  }
}

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
  /** Failed checks, connection errors, timeouts, requests lost without an answer, work a drain missed. */
  errors: number;
  /** Seconds of load plus, where a side drains after each slice (see scenario.ts), its drains. */
  durationS: number;
  /** Of `durationS`, the seconds spent waiting for the side's work to drain after its slices. */
  drainS: number;
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
  /** Of `durationS`, seconds of draining added after the load (0 unless the caller adds one). */
  drainS?: number;
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
      {
        method: spec.method ?? 'GET',
        headers: spec.headers ?? {},
        agent,
        // The whole exchange, answer's body included: a hung request fails instead of hanging the run.
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_S * 1000),
      },
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
      const judged = runCheck(made?.check ?? spec.check, res.status, res.body, res.headers);
      if (judged.ok) {
        ok++;
        latencies.push(performance.now() - started);
      } else {
        errors++;
        firstFailure ??= `${res.status} ${res.body.slice(0, 300)}${judged.why ? ` (${judged.why})` : ''}`;
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
    const judged = runCheck(check, status, body, headers);
    lastOk = judged.ok;
    if (lastOk) ok++;
    else {
      failed++;
      firstFailure ??= `${status} ${body.slice(0, 300)}${judged.why ? ` (${judged.why})` : ''}`;
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
  const lost = lostRequests(result, spec.connections);
  if (lost > 0)
    firstFailure ??= `${lost} requests lost: the server closed their connection without answering`;
  return { ok, errors: failed + result.errors + lost, durationS: result.duration, latencies, firstFailure };
}

/**
 * Requests autocannon sent that were neither answered nor counted as its errors: lost on a connection the
 * server closed (FIN) without answering them. autocannon 9 (lib/httpClient.js, lib/run.js) then reconnects
 * and sends the next request, counting nothing. `requests.sent` (run.js's totalRequests: one per client at
 * the start, then one per `request` event, reconnections' included) = answered (`requests.total`, run.js's
 * totalCompletedRequests) + the one request each client (pipelining 1) still has outstanding when the
 * phase stops and destroys it + one per connection error or timeout (`errors`, which counts both: each
 * drops the request in flight and sends a new one) + those lost silently. A request lost in the last
 * moment, whose connection's end has not been read yet, passes for outstanding: the count can only be low.
 * (The queue of a client that lost a request also keeps its stale entry, so that client's later latencies
 * are timed from the wrong request: the phase fails on the errors, and its latencies are not to be read.)
 */
export function lostRequests(
  result: Pick<autocannon.Result, 'errors'> & { requests: { sent: number; total: number } },
  connections: number,
): number {
  return Math.max(0, result.requests.sent - result.requests.total - connections - result.errors);
}

/** Adds up stretches of load of one side into its result. */
export function summarize(phases: RawPhase[]): LoadResult {
  const latencies = phases.flatMap((p) => p.latencies).sort((a, b) => a - b);
  const ok = phases.reduce((n, p) => n + p.ok, 0);
  const durationS = phases.reduce((n, p) => n + p.durationS, 0);
  return {
    drainS: phases.reduce((n, p) => n + (p.drainS ?? 0), 0),
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
