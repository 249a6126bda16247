/**
 * The Redis the limits share between processes (REDIS_URL), with a breaker: the limits fail open, and must
 * do so at once. A Redis that refuses connections failed at once already; one that stops answering (a
 * network blackhole, a server paused) held every request for a command timeout per Redis call, two per
 * request, for as long as it lasted: 2 s a request, 100 requests a second for 200 clients. Now a command
 * asked through `ask` that fails or outlasts its limit opens the breaker for OPEN_MS, a socket silent for
 * SOCKET_TIMEOUT_MS is dropped and reconnected, and while the client is not ready or the breaker is open,
 * callers skip Redis.
 */
import type { Redis } from 'ioredis';

/** How long callers skip Redis after a command failed. */
export const OPEN_MS = 5000;
/** How long one command may take before it fails (and opens the breaker). */
const COMMAND_LIMIT_MS = 1000;
/** How long a socket with commands in flight may stay silent before it is dropped and reconnected. */
const SOCKET_TIMEOUT_MS = 3000;

/** Thrown by `ask` when Redis has not answered within the limit. */
export class RedisTimeoutError extends Error {
  override name = 'RedisTimeoutError';
}

/** A Redis client and whether to use it now. */
export interface SharedRedis {
  readonly client: Redis;
  /** True when the client is connected and no command failed in the last OPEN_MS. */
  usable(): boolean;
  /** Runs a command with the time limit; a failure or a timeout opens the breaker and is thrown. */
  ask<T>(command: () => Promise<T>): Promise<T>;
  close(): void;
}

/**
 * Settles with `work`, or rejects once `ms` have passed and `work` has still not settled after the sockets
 * were read. A timer fires in the loop's timers phase, before the poll phase reads the sockets, so a loop
 * held past the limit (a busy process) would fail a command whose answer is already waiting to be read:
 * ioredis's own `commandTimeout` did, and opened the breaker of a process that Redis was answering. The
 * verdict is deferred to `setImmediate`, which runs after the poll phase.
 */
export function withinLimit<T>(work: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (settled) return;
        settled = true;
        reject(new RedisTimeoutError(`Redis did not answer within ${ms} ms`));
      });
    }, ms);
    work.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** Connects to `url` (ioredis is loaded only here: it adds about 20 MB resident). */
export async function openSharedRedis(url: string): Promise<SharedRedis> {
  const { Redis } = await import('ioredis');
  const client = new Redis(url, {
    connectTimeout: 1000,
    maxRetriesPerRequest: 1,
    lazyConnect: false,
    // With the offline queue a command waited for a reconnection (about 10 s), and every request made two.
    enableOfflineQueue: false,
    // No `commandTimeout`: `ask` limits each command; a command it gave up on is failed when the silent
    // socket is dropped.
    socketTimeout: SOCKET_TIMEOUT_MS,
  });
  // Without a listener, a lost connection would crash the process; the limits fail open meanwhile.
  client.on('error', () => {});
  let openUntil = 0;
  return {
    client,
    usable: () => client.status === 'ready' && Date.now() >= openUntil,
    async ask(command) {
      try {
        return await withinLimit(command(), COMMAND_LIMIT_MS);
      } catch (error) {
        openUntil = Date.now() + OPEN_MS;
        throw error;
      }
    },
    close: () => client.disconnect(),
  };
}
