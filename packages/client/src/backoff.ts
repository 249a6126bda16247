/** Waiting between retries: exponential back-off with full jitter, cut short by an abort; Retry-After. */
import { CqsError, isRetryable } from './errors.ts';

/** The longest wait a timer takes: setTimeout fires at once (with a warning) for more than 2^31 − 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A delay in ms for attempt `n` (1-based): uniform in [0, min(cap, base·2^n)). */
export function fullJitter(n: number, baseMs = 250, capMs = 10_000): number {
  return Math.random() * Math.min(capMs, baseMs * 2 ** n);
}

/**
 * Resolves after `ms` (at most MAX_TIMER_MS), or rejects with the signal's reason when it aborts first.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.min(MAX_TIMER_MS, Math.max(0, ms)),
    );
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The wait a `Retry-After` header asks for, in ms: delay-seconds (`120`) or an HTTP-date
 * (`Wed, 21 Oct 2026 07:28:00 GMT`, counted from `now`); at most MAX_TIMER_MS, never negative.
 * Undefined when there is no header or it is neither form.
 */
export function retryAfterMs(value: string | null | undefined, now = Date.now()): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    // An HTTP-date starts with the day's name (IMF-fixdate, RFC 850 and asctime forms alike); Date.parse
    // alone would also read a number such as `1.5` as a date.
    const date = /^[A-Za-z]{3,9},? /.test(text) ? Date.parse(text) : Number.NaN;
    if (Number.isNaN(date)) return undefined;
    ms = date - now;
  }
  return Math.min(MAX_TIMER_MS, Math.max(0, ms));
}

/** The pause before retry number `failures` (1-based) after `error`: the longer of its Retry-After and the back-off. */
export function retryPause(error: unknown, failures: number, baseMs = 500, capMs = 30_000): number {
  const asked = error instanceof CqsError ? (error.retryAfterMs ?? 0) : 0;
  return Math.min(MAX_TIMER_MS, Math.max(asked, fullJitter(failures, baseMs, capMs)));
}

/** How an idempotent request is retried after transient failures. */
export interface RetryOptions {
  /**
   * Transient failures (a network error, 429 or 5xx) retried in a row before the error is thrown;
   * each retry waits the longer of the answer's `Retry-After` and an exponential back-off (to 30 s).
   */
  maxRetries?: number;
  /** Called before each retry with the error, the retry's number (1-based) and the pause in ms. */
  onRetry?: (error: unknown, retry: number, delayMs: number) => void;
  signal?: AbortSignal;
}

/** Runs `request`, again after each transient failure, as RetryOptions says; rejects with the signal's reason on abort. */
export async function withRetries<T>(
  request: () => Promise<T>,
  options: RetryOptions,
  defaultRetries: number,
): Promise<T> {
  const maxRetries = options.maxRetries ?? defaultRetries;
  for (let failures = 0; ; ) {
    try {
      return await request();
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (!isRetryable(error) || failures >= maxRetries) throw error;
      failures++;
      const pause = retryPause(error, failures);
      options.onRetry?.(error, failures, pause);
      await sleep(pause, options.signal);
    }
  }
}
