/** Waiting for a final call-handoff record: long poll with ETags, falling back to polling with jitter. */
import { fullJitter, sleep } from './backoff.ts';
import { CqsError, CqsTimeoutError, isAbort } from './errors.ts';
import { readBody, type Transport } from './http.ts';
import type { CallHandoff } from './types.ts';

/** Options of waitForFinalHandoff. */
export interface WaitOptions {
  /** Stop waiting: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Give up at this time (ms since the epoch or a Date): rejects with CqsTimeoutError. */
  deadline?: number | Date;
  /** Seconds each long poll may wait on the server (1–30, default 25); 0 polls instead. */
  waitSeconds?: number;
}

/** Milliseconds a request may take past the long poll it asked for before it is given up. */
const REQUEST_MARGIN_MS = 30_000;

/** Returns the record once it is final. */
export async function waitForFinalHandoff(
  transport: Transport,
  handoffId: string,
  options: WaitOptions = {},
): Promise<CallHandoff> {
  const deadline = options.deadline === undefined ? Number.POSITIVE_INFINITY : Number(options.deadline);
  let longPoll = (options.waitSeconds ?? 25) > 0;
  let etag: string | null = null;
  let failures = 0;
  let quiet = 0;
  const path = `/api/v1/call-handoff/${encodeURIComponent(handoffId)}`;
  for (;;) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new CqsTimeoutError(`call handoff ${handoffId} is not final yet`);
    const wait = longPoll
      ? Math.max(0, Math.min(options.waitSeconds ?? 25, Math.floor(remaining / 1000)))
      : 0;
    const headers: Record<string, string> = { authorization: `Bearer ${transport.apiKey}` };
    if (etag) headers['if-none-match'] = etag;
    // Each request's own limit: its long poll and a margin, never past the deadline. A timer takes at most
    // 2^31 - 1 ms: a deadline further off made one fire at once, and a 30-day wait sent hundreds of requests
    // a second.
    const limit = AbortSignal.timeout(Math.max(1, Math.min(remaining, wait * 1000 + REQUEST_MARGIN_MS)));
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
      // A network error, or a request past its own limit: back off below.
    }
    if (res && (res.status === 200 || res.status === 304)) {
      failures = 0;
      if (res.status === 200) {
        etag = res.headers.get('etag');
        const record = (await res.json()) as CallHandoff;
        if (record.final) return record;
        quiet = 0;
      } else {
        await res.body?.cancel();
        quiet++;
      }
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
      if (res) await res.body?.cancel();
      failures++;
      const retryAfter = Number(res?.headers.get('retry-after')) * 1000 || 0;
      await pauseUntil(deadline, Math.max(retryAfter, fullJitter(failures, 500, 30_000)), options);
      continue;
    }
    throw new CqsError(res.status, await readBody(res), `GET ${path}`);
  }
}

/** Sleeps `ms`, but not past the deadline. */
function pauseUntil(deadline: number, ms: number, options: WaitOptions): Promise<void> {
  return sleep(Math.max(0, Math.min(ms, deadline - Date.now())), options.signal);
}
