/** Waiting for a final call-handoff record: long poll with ETags, falling back to polling with jitter. */
import { fullJitter, MAX_TIMER_MS, sleep } from './backoff.ts';
import { CqsTimeoutError, describeFailure, isAbort } from './errors.ts';
import { errorOf, readSuccess, type Transport } from './http.ts';
import type { CallHandoff } from './types.ts';

/** Options of waitForFinalHandoff. */
export interface WaitOptions {
  /** Stop waiting: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Give up at this time (ms since the epoch or a Date): rejects with CqsTimeoutError. */
  deadline?: number | Date;
  /**
   * Seconds each long poll may wait on the server (1–30, default 25); 0 polls instead. A value outside
   * 0–30 (which the service refuses) is a RangeError.
   */
  waitSeconds?: number;
}

/** The longest long poll the service takes (`?wait=` above it is a 422). */
export const MAX_WAIT_SECONDS = 30;

/** Milliseconds a request may take past the long poll it asked for before it is given up. */
const REQUEST_MARGIN_MS = 30_000;

/** Returns the record once it is final. */
export async function waitForFinalHandoff(
  transport: Transport,
  handoffId: string,
  options: WaitOptions = {},
): Promise<CallHandoff> {
  const deadline = options.deadline === undefined ? Number.POSITIVE_INFINITY : Number(options.deadline);
  const waitSeconds = options.waitSeconds ?? 25;
  // A wait the service refuses (422) made the client take it for a service without long polls and poll
  // instead, every second or two, for the whole wait.
  if (!(waitSeconds >= 0 && waitSeconds <= MAX_WAIT_SECONDS)) {
    throw new RangeError(`waitSeconds must be from 0 to ${MAX_WAIT_SECONDS}: ${options.waitSeconds}`);
  }
  let longPoll = waitSeconds > 0;
  let etag: string | null = null;
  let failures = 0;
  let quiet = 0;
  /** What the last request got, for the timeout's message: `304, the record is not final`, `503 …`, an error. */
  let last = 'no answer yet';
  const path = `/api/v1/call-handoff/${encodeURIComponent(handoffId)}`;
  for (;;) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw new CqsTimeoutError(`call handoff ${handoffId} is not final yet (the last request: ${last})`);
    }
    const wait = longPoll ? Math.max(0, Math.min(waitSeconds, Math.floor(remaining / 1000))) : 0;
    const headers: Record<string, string> = { authorization: `Bearer ${transport.apiKey}` };
    if (etag) headers['if-none-match'] = etag;
    // Each request's own limit: its long poll and a margin, never past the deadline. A timer takes at most
    // 2^31 - 1 ms: a deadline further off made one fire at once, and a 30-day wait sent hundreds of requests
    // a second.
    const limit = AbortSignal.timeout(
      Math.max(1, Math.min(remaining, wait * 1000 + REQUEST_MARGIN_MS, MAX_TIMER_MS)),
    );
    const signal = options.signal ? AbortSignal.any([options.signal, limit]) : limit;
    let res: Response | undefined;
    try {
      res = await transport.fetch(`${transport.baseUrl}${path}${wait > 0 ? `?wait=${wait}` : ''}`, {
        headers,
        signal,
      });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (isAbort(error) && Date.now() >= deadline) continue; // the loop's check throws the timeout
      last = isAbort(error) ? 'no answer in time' : describeFailure(error);
      // A network error, or a request past its own limit: back off below.
    }
    if (res && (res.status === 200 || res.status === 304)) {
      failures = 0;
      if (res.status === 200) {
        // A 200 that is not JSON (a proxy's page) is a CqsError, not a record.
        const record = (await readSuccess(res, `GET ${path}`)) as CallHandoff;
        etag = res.headers.get('etag');
        if (record.final) return record;
        quiet = 0;
      } else {
        await res.body?.cancel();
        quiet++;
      }
      last = `${res.status}, the record is not final`;
      // A long poll did its waiting on the server; polling waits here, longer while nothing changes.
      if (wait === 0)
        await pauseUntil(deadline, 250 * 2 ** Math.min(quiet, 4) * (0.5 + Math.random()), options);
      continue;
    }
    if (res && (res.status === 400 || res.status === 422) && wait > 0) {
      await res.body?.cancel();
      longPoll = false; // a server without the `wait` extension: poll instead
      continue;
    }
    if (!res || res.status === 429 || res.status >= 500) {
      failures++;
      // The longer of Retry-After (seconds or an HTTP-date) and the back-off, never past the deadline.
      let retryAfter = 0;
      if (res) {
        const error = await errorOf(res, `GET ${path}`);
        last = `${error.status} ${error.error}`;
        retryAfter = error.retryAfterMs ?? 0;
      }
      await pauseUntil(deadline, Math.max(retryAfter, fullJitter(failures, 500, 30_000)), options);
      continue;
    }
    throw await errorOf(res, `GET ${path}`);
  }
}

/** Sleeps `ms`, but not past the deadline (nor past the longest timer). */
function pauseUntil(deadline: number, ms: number, options: WaitOptions): Promise<void> {
  return sleep(Math.max(0, Math.min(ms, deadline - Date.now(), MAX_TIMER_MS)), options.signal);
}
