/** Polling for a condition the service reaches in the background (a worker's job, a delivery, a cache). */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long and how often `pollUntil` reads, and what its failure says. */
export interface PollOptions<T> {
  /** Give up after this long (default 30 s: a loaded CI machine may be slow, not wrong). */
  timeoutMs?: number;
  /** Pause between reads (default 50 ms). */
  everyMs?: number;
  /** The failure's message, from the last value read. */
  what?: (last: T) => string;
}

/**
 * Reads with `read` until `done` holds for what it answered, and answers that; fails the test (with `what`
 * of the last value) once `timeoutMs` passed. The first read is at once.
 */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  options: PollOptions<T> = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    assert.ok(Date.now() < deadline, options.what?.(value) ?? `not reached: ${JSON.stringify(value)}`);
    await sleep(options.everyMs ?? 50);
  }
}
