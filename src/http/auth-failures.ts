/**
 * A limit on failed authentications per client address: past AUTH_FAILURE_MAX failures (401s) within
 * AUTH_FAILURE_WINDOW seconds, the address gets 429 with Retry-After, before any key look-up, until the
 * window ends. Counted in Redis when REDIS_URL is set (so every process shares one count), else in process
 * memory. A Redis error fails open: authentication still works, only uncounted. Runs before the per-key
 * rate limiter, which can only count a key once it is known.
 */
import ipaddr from 'ipaddr.js';
import type { SharedRedis } from '../adapters/redis/shared-redis.ts';

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

/**
 * One failure more, in one script (atomic, whatever becomes of the client): the window starts at the first
 * failure, and a count found without an expiry gets one. Sent as INCR and PTTL, then PEXPIRE apart, a
 * client that gave up waiting (a slow Redis, a process killed) never sent the PEXPIRE, and the address,
 * once at the limit, was refused for good (a 429 comes before any failure that could set it).
 */
const ADD_FAILURE = `
local n = redis.call('INCR', KEYS[1])
if n == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

/**
 * Counts in Redis: one key per address that expires with its window. Skips Redis (counts nothing, finds
 * nothing) while it is not to be asked, and opens its breaker on a failed command.
 */
export function redisFailureStore(redis: SharedRedis, windowMs: number): AuthFailureStore {
  const key = (address: string) => `cqs-auth-failures:${address}`;
  const asking = async <T>(command: () => Promise<T>, skipped: T): Promise<T> => {
    if (!redis.usable()) return skipped;
    return redis.ask(command);
  };
  return {
    get: (address) =>
      asking(async () => {
        const k = key(address);
        const [[, count], [, ttl]] = (await redis.client.multi().get(k).pttl(k).exec()) as [
          [unknown, string | null],
          [unknown, number],
        ];
        // A count without an expiry (left by an earlier version) would never end: it gets its window.
        if (count !== null && ttl === -1) {
          await redis.client.pexpire(k, windowMs);
          return { count: Number(count), resetMs: windowMs };
        }
        return { count: Number(count ?? 0), resetMs: Math.max(0, ttl) };
      }, NO_FAILURES),
    add: (address) =>
      asking(async () => {
        await redis.client.eval(ADD_FAILURE, 1, key(address), windowMs);
      }, undefined),
  };
}

const NO_FAILURES: FailureCount = Object.freeze({ count: 0, resetMs: 0 });

/**
 * The address failures are counted under: an IPv4 address as it is, an IPv4-mapped IPv6 one as its IPv4,
 * and any other IPv6 one by its /64. A client holds a whole /64 (one address per failure, 2^64 of them),
 * so counted by address it was never limited; @fastify/rate-limit groups by /64 for the same reason.
 */
export function failureAddress(ip: string): string {
  if (!ip.includes(':') || !ipaddr.IPv6.isValid(ip)) return ip;
  const v6 = ipaddr.IPv6.parse(ip);
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  return `${v6.parts
    .slice(0, 4)
    .map((part) => part.toString(16))
    .join(':')}::/64`;
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
  /**
   * How many failures this process has counted: a standing read while it was lower may miss one of them.
   * Counted once each failure has reached the store.
   */
  counted(): number;
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
  let counted = 0;
  return {
    counted: () => counted,
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
      counted++;
    },
  };
}
