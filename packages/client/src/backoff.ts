/** Waiting between retries: exponential back-off with full jitter, cut short by an abort. */

/** A delay in ms for attempt `n` (1-based): uniform in [0, min(cap, base·2^n)). */
export function fullJitter(n: number, baseMs = 250, capMs = 10_000): number {
  return Math.random() * Math.min(capMs, baseMs * 2 ** n);
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
