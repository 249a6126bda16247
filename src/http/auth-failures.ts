/**
 * A limit on failed authentications per client address: past AUTH_FAILURE_MAX failures (401s) within
 * AUTH_FAILURE_WINDOW seconds, the address gets 429 with Retry-After, before any key look-up, until the
 * window ends. Counted in Redis when REDIS_URL is set (so every process shares one count), else in process
 * memory. A Redis error fails open: authentication still works, only uncounted. Runs before the per-key
 * rate limiter, which can only count a key once it is known.
 */
import type { Redis } from 'ioredis';

/** The count of one address's failures in the current window. */
export interface FailureCount {
  count: number;
  /** Milliseconds until the window ends. */
  resetMs: number;
}

/** Where failures are counted. */
export interface AuthFailureStore {
  /** The address's failures so far (0 when none). */
  get(address: string): Promise<FailureCount>;
  /** Like `get`, without a promise, for a store that counts in this process. */
  getNow?(address: string): FailureCount;
  /** Counts one more failure of the address. */
  add(address: string): Promise<void>;
}

/** Counts in process memory; windows that ended are dropped as they are seen, and all at a size bound. */
export function memoryFailureStore(windowMs: number, maxAddresses = 100_000): AuthFailureStore {
  const windows = new Map<string, { count: number; endsAt: number }>();
  const current = (address: string) => {
    const w = windows.get(address);
    if (w && w.endsAt <= Date.now()) {
      windows.delete(address);
      return undefined;
    }
    return w;
  };
  const getNow = (address: string): FailureCount => {
    const w = current(address);
    return w ? { count: w.count, resetMs: w.endsAt - Date.now() } : { count: 0, resetMs: 0 };
  };
  return {
    getNow,
    async get(address) {
      return getNow(address);
    },
    async add(address) {
      const w = current(address);
      if (w) {
        w.count++;
        return;
      }
      if (windows.size >= maxAddresses) {
        // Every window is windowMs long and a Map iterates in insertion order, so the windows come in the
        // order they end: those that ended go, then, while still full (an address flood), the oldest. The
        // scan stops at the first it keeps; it read every window before, 3.5 ms of the event loop per failure
        // once 100,000 addresses were counted (issue 16).
        const now = Date.now();
        for (const [a, x] of windows) {
          if (x.endsAt > now && windows.size < maxAddresses) break;
          windows.delete(a);
        }
      }
      windows.set(address, { count: 1, endsAt: Date.now() + windowMs });
    },
  };
}

/** Counts in Redis: one key per address that expires with its window. */
export function redisFailureStore(redis: Redis, windowMs: number): AuthFailureStore {
  const key = (address: string) => `cqs-auth-failures:${address}`;
  return {
    async get(address) {
      const [[, count], [, ttl]] = (await redis.multi().get(key(address)).pttl(key(address)).exec()) as [
        [unknown, string | null],
        [unknown, number],
      ];
      return { count: Number(count ?? 0), resetMs: Math.max(0, ttl) };
    },
    async add(address) {
      // The window starts at the first failure: the expiry is set only when the key has none (a new key).
      const result = await redis.multi().incr(key(address)).pttl(key(address)).exec();
      if (result?.[1]?.[1] === -1) await redis.pexpire(key(address), windowMs);
    },
  };
}

/** Where an address stands: how long it must wait, and how many more failures it may have meanwhile. */
export interface Standing {
  /** Seconds the address must wait, or 0 when it may try. */
  wait: number;
  /** Failures the address may still have in its window (Infinity when the limit is off). */
  left: number;
}

/** The limiter: `standing` before authentication, `failed` after a 401. */
export interface AuthFailureLimiter {
  /** The address's standing now. */
  standing(address: string): Promise<Standing>;
  /** Like `standing`, without a promise, when the store counts in this process; else undefined. */
  standingNow(address: string): Standing | undefined;
  /** Counts a failure of the address. */
  failed(address: string): Promise<void>;
}

const OFF: Standing = Object.freeze({ wait: 0, left: Number.POSITIVE_INFINITY });

/** A limiter over a store; `max` 0 turns it off. Store errors let requests through. */
export function authFailureLimiter(store: AuthFailureStore, max: number): AuthFailureLimiter {
  // Most addresses have no failure: one shared answer for them, not an object per request.
  const clean: Standing = Object.freeze({ wait: 0, left: max });
  const standingOf = ({ count, resetMs }: FailureCount): Standing => {
    if (count === 0) return clean;
    return count >= max
      ? { wait: Math.max(1, Math.ceil(resetMs / 1000)), left: 0 }
      : { wait: 0, left: max - count };
  };
  return {
    standingNow(address) {
      if (max === 0) return OFF;
      return store.getNow ? standingOf(store.getNow(address)) : undefined;
    },
    async standing(address) {
      if (max === 0) return OFF;
      try {
        return standingOf(await store.get(address));
      } catch {
        return clean;
      }
    },
    async failed(address) {
      if (max === 0) return;
      await store.add(address).catch(() => {});
    },
  };
}
