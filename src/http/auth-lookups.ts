/**
 * Key look-ups (keys not in memory) per client address, at most as many at a time as the address may still
 * fail. The failed-authentication limit is checked before a look-up and counted after it, so without this
 * any number of requests at once with unknown keys all got a look-up and a 401, whatever the limit. The
 * excess waits for a running look-up to end and then checks the limit again: a legitimate burst of keys not
 * in memory (after an access change empties every cache; a call center behind one address) waits a few
 * look-ups' time instead of being refused, as counting each look-up as a failure in advance did.
 *
 * Per process: the count itself is shared (Redis), but the look-ups under way are not, so with P processes
 * an address may have up to P times its remaining failures at once. A waiter costs a closure here and the
 * request it already holds open.
 */
import { UnauthenticatedError } from '../domain/errors.ts';
import type { AuthFailureLimiter, Standing } from './auth-failures.ts';

/** What an address that used up its failures is told, with the seconds it must wait. */
export function tooManyFailures(wait: number): string {
  return `too many failed authentications from this address; retry in ${wait} s`;
}

/** Thrown instead of a look-up when the address used up its failures while it waited. */
export class FailuresExhausted extends Error {
  /** Seconds the address must wait. */
  readonly wait: number;
  constructor(wait: number) {
    super(tooManyFailures(wait));
    this.wait = wait;
  }
}

/** Runs key look-ups under the failed-authentication limit. */
export interface LookupGate {
  /**
   * Runs `lookUp` for `address` once fewer look-ups of it are under way than it has failures left, and
   * counts an UnauthenticatedError from it as a failure before the next may start. `standing` is the
   * address's as read just before, when `failures.counted()` was `readAt`; it is read again when a failure
   * was counted since, and by a waiter when its turn comes.
   */
  run<T>(address: string, standing: Standing, readAt: number, lookUp: () => T | Promise<T>): Promise<T>;
}

interface Queue {
  running: number;
  waiting: (() => void)[];
  /** Requests in `run` for this address, in any state: the queue is dropped when none is left. */
  holders: number;
}

/** A gate over `failures`. */
export function lookupGate(failures: AuthFailureLimiter): LookupGate {
  const queues = new Map<string, Queue>();
  const room = (q: Queue, standing: Standing) => q.running < Math.max(1, standing.left);

  async function enter(q: Queue, address: string, first: Standing, firstReadAt: number): Promise<void> {
    let standing = first;
    let readAt = firstReadAt;
    let woken = false;
    for (;;) {
      // A standing read before a failure of this process reached the store may not count it, and let one
      // look-up too many start (a slow store: the read was sent before, the look-up comes after): read again.
      if (woken || readAt !== failures.counted()) {
        readAt = failures.counted();
        standing = await failures.standing(address);
        if (standing.wait > 0) {
          // The next waiter must hear it too: each one woken wakes the next.
          if (woken) q.waiting.shift()?.();
          throw new FailuresExhausted(standing.wait);
        }
        if (readAt !== failures.counted()) continue;
      }
      if (room(q, standing)) break;
      await new Promise<void>((resolve) => q.waiting.push(resolve));
      woken = true;
    }
    q.running++;
    // A window that ended meanwhile leaves room for more than the one place that was freed.
    if (room(q, standing)) q.waiting.shift()?.();
  }

  return {
    async run(address, standing, readAt, lookUp) {
      let q = queues.get(address);
      if (!q) {
        q = { running: 0, waiting: [], holders: 0 };
        queues.set(address, q);
      }
      q.holders++;
      try {
        await enter(q, address, standing, readAt);
        try {
          return await lookUp();
        } catch (error) {
          if (error instanceof UnauthenticatedError) await failures.failed(address);
          throw error;
        } finally {
          q.running--;
          q.waiting.shift()?.();
        }
      } finally {
        if (--q.holders === 0) queues.delete(address);
      }
    },
  };
}
