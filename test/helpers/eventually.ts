/** Waiting for something another process (or a notification) makes true. */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

/** Polls `check` until it holds, for at most `ms`; fails with `what` otherwise. */
export async function within(
  ms: number,
  what: string,
  check: () => Promise<boolean> | boolean,
): Promise<void> {
  const deadline = performance.now() + ms;
  for (;;) {
    if (await check()) return;
    if (performance.now() > deadline) assert.fail(`not within ${ms} ms: ${what}`);
    await sleep(10);
  }
}
