/**
 * Change notifications on PostgreSQL: one dedicated connection per process runs LISTEN (a pooled
 * connection cannot: the pool would hand it to queries and drop the LISTEN with it). It connects on the
 * first subscription, reconnects after a loss, and then wakes every subscriber, because notifications
 * sent while it was away are gone. A connection that goes silent (a firewall or NAT dropping an idle
 * connection, a paused network) raises no error for hours, and every cache that trusts the notices would
 * keep what a missed one should have cleared: a heartbeat query finds it, and it counts as lost.
 */
import pg from 'pg';
import { socketOf } from '../db/whole-message-socket.ts';
import { type ChangeNotifier, createFanOut, HANDOFF_CHANNEL } from './notifier.ts';

/** How long to wait before reconnecting after the listening connection was lost, in milliseconds. */
const RECONNECT_DELAY_MS = 1000;

/** Options of the PostgreSQL notifier. */
export interface PgNotifierOptions {
  /**
   * Milliseconds between two heartbeat queries (DB_LISTEN_HEARTBEAT); one unanswered by the next counts as a
   * lost connection, so a silent one is found within two of them.
   */
  heartbeatMs: number;
}

/** A notifier for a PostgreSQL server. */
export function createPgNotifier(connectionString: string, options: PgNotifierOptions): ChangeNotifier {
  const { heartbeatMs } = options;
  const fanOut = createFanOut();
  let client: pg.Client | undefined;
  let ready: Promise<void> | undefined;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let closed = false;

  function lost(c: pg.Client): void {
    if (client !== c) return;
    client = undefined;
    ready = undefined;
    socketOf(c)?.destroy();
    c.end().catch(() => {});
    // Subscribers re-read: whatever changed while the connection was down was not announced.
    fanOut.dispatchAll();
    scheduleReconnect();
  }

  function scheduleReconnect(): void {
    if (closed || reconnectTimer || fanOut.size === 0) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      if (closed || fanOut.size === 0) return;
      ensureListening().then(
        () => fanOut.dispatchAll(),
        () => scheduleReconnect(),
      );
    }, RECONNECT_DELAY_MS);
    reconnectTimer.unref();
  }

  async function connect(): Promise<void> {
    const c = new pg.Client({ connectionString, keepAlive: true, connectionTimeoutMillis: 5000 });
    c.on('error', () => lost(c));
    c.on('end', () => lost(c));
    c.on('notification', (message) => {
      if (message.channel === HANDOFF_CHANNEL && message.payload) fanOut.dispatch(message.payload);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${HANDOFF_CHANNEL}`);
    } catch (error) {
      c.end().catch(() => {});
      throw error;
    }
    if (closed) {
      await c.end().catch(() => {});
      return;
    }
    client = c;
    heartbeat(c);
  }

  /** Queries `c` every `heartbeatMs` while it is the listener; one query still unanswered by the next loses it. */
  function heartbeat(c: pg.Client): void {
    let unanswered = false;
    const timer = setInterval(() => {
      if (client !== c) {
        clearInterval(timer);
        return;
      }
      if (unanswered) {
        clearInterval(timer);
        lost(c);
        return;
      }
      unanswered = true;
      // A failed query also ends the connection, through its 'error' or 'end'.
      c.query('select 1').then(
        () => {
          unanswered = false;
        },
        () => {},
      );
    }, heartbeatMs);
    timer.unref();
  }

  function ensureListening(): Promise<void> {
    ready ??= connect().catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  }

  async function listenFor(unsubscribe: () => void): Promise<() => void> {
    try {
      await ensureListening();
    } catch (error) {
      unsubscribe();
      throw error;
    }
    return unsubscribe;
  }

  return {
    async subscribe(key, listener) {
      if (closed) throw new Error('change notifier is closed');
      return listenFor(fanOut.add(key, listener));
    },
    async subscribeAll(listener) {
      if (closed) throw new Error('change notifier is closed');
      return listenFor(fanOut.addAny(listener));
    },
    get listening() {
      return client !== undefined;
    },
    async close() {
      if (closed) return;
      closed = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      const c = client;
      client = undefined;
      ready = undefined;
      fanOut.dispatchAll();
      if (c) await c.end().catch(() => {});
    },
  };
}
