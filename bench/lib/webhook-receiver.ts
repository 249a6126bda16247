/** The webhooks scenario's receiver as a child process (webhook-receiver-server.ts), and its counts. */
import { freePort } from '../../test/helpers/process.ts';
import { type Child, spawnNode, waitForHttp } from './process.ts';
import { childEnv } from './service.ts';

/** What the receiver counted since its last reset (times in ms since the epoch, its clock: this machine's). */
export interface ReceiverStats {
  /** Only events written from this time on count. */
  from: number;
  /** First arrivals of a (path, webhook-id). */
  delivered: number;
  /** When the first and the last of them arrived (0: none yet). */
  first: number;
  last: number;
  /** Deliveries whose body was not an event's JSON. */
  malformed: number;
}

/** A running receiver. */
export interface Receiver {
  /** Its base URL: an endpoint is `${url}/<n>`. */
  url: string;
  child: Child;
  /** Forgets every arrival; only events written from now on (the answer's `from`) count. */
  reset(): Promise<ReceiverStats>;
  stats(): Promise<ReceiverStats>;
  /** The lag (ms) of each counted arrival, from its event's created_at. */
  lags(): Promise<number[]>;
  stop(): Promise<void>;
}

/** Starts the receiver on a free loopback port and waits until it answers. */
export async function startReceiver(): Promise<Receiver> {
  const script = new URL('./webhook-receiver-server.ts', import.meta.url).pathname;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawnNode('webhook receiver', script, [], childEnv({ PORT: String(port) }));
  const ask = async <T>(method: 'GET' | 'POST', path: string): Promise<T> => {
    const response = await fetch(`${url}/__bench/${path}`, { method, signal: AbortSignal.timeout(10_000) });
    if (response.status !== 200) throw new Error(`the receiver answered ${response.status} to ${path}`);
    return (await response.json()) as T;
  };
  try {
    await waitForHttp(child, `${url}/__bench/stats`, 200);
  } catch (error) {
    await child.stop();
    throw error;
  }
  return {
    url,
    child,
    reset: () => ask<ReceiverStats>('POST', 'reset'),
    stats: () => ask<ReceiverStats>('GET', 'stats'),
    lags: async () => (await ask<{ lags: number[] }>('GET', 'lags')).lags,
    stop: () => child.stop(),
  };
}
