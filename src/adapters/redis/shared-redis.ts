/**
 * The Redis the limits share between processes (REDIS_URL), with a breaker: the limits fail open, and must
 * do so at once. A Redis that refuses connections failed at once already; one that stops answering (a
 * network blackhole, a server paused) held every request for a command timeout per Redis call, two per
 * request, for as long as it lasted: 2 s a request, 100 requests a second for 200 clients. Now a failed
 * command opens the breaker for OPEN_MS, a socket silent for SOCKET_TIMEOUT_MS is dropped and reconnected,
 * and while the client is not ready or the breaker is open, callers skip Redis.
 */
import type { Redis } from 'ioredis';

/** How long callers skip Redis after a command failed. */
export const OPEN_MS = 5000;
/**
 * How long one command may take before it fails (and opens the breaker). ioredis times it on the event
 * loop: a loop held longer than this fails a command whose answer has already come, so it stays well above
 * the pauses of a busy process (at 500 ms, a test of 40 concurrent look-ups on a loaded machine opened it).
 */
const COMMAND_TIMEOUT_MS = 1000;
/** How long a socket with commands in flight may stay silent before it is dropped and reconnected. */
const SOCKET_TIMEOUT_MS = 3000;

/** A Redis client and whether to use it now. */
export interface SharedRedis {
  readonly client: Redis;
  /** True when the client is connected and no command failed in the last OPEN_MS. */
  usable(): boolean;
  /** Records a failed command: callers skip Redis for OPEN_MS. */
  failed(): void;
  close(): void;
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
    commandTimeout: COMMAND_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
  });
  // Without a listener, a lost connection would crash the process; the limits fail open meanwhile.
  client.on('error', () => {});
  let openUntil = 0;
  return {
    client,
    usable: () => client.status === 'ready' && Date.now() >= openUntil,
    failed() {
      openUntil = Date.now() + OPEN_MS;
    },
    close: () => client.disconnect(),
  };
}
