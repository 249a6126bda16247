/**
 * Watching handoff records for long polls. However many requests wait on one record in this process,
 * there is one subscription to its notifications and, per notification, one re-read whose result is
 * handed to every waiter: waiting costs no query until something changes.
 */
import { createStringMap } from '../../adapters/cache/string-map.ts';
import type { Db } from '../../adapters/db/database.ts';
import { findHandoff, type HandoffRow } from '../../adapters/db/repositories/call-handoffs.ts';
import type { ChangeNotifier } from '../../adapters/notify/notifier.ts';
import { TRUNCATED_KEY } from './final-cache.ts';

/** Receives each fresh read of the watched record; undefined when it no longer exists. */
export type WatchListener = (row: HandoffRow | undefined) => void;

/** Shared watches of handoff records. */
export interface HandoffWatcher {
  /** Starts delivering fresh reads of the record to `listener`; resolves once changes are heard. */
  watch(companyId: string, id: string, listener: WatchListener): Promise<() => void>;
  /** How many records are watched now (for tests and metrics). */
  readonly watched: number;
}

interface Watch {
  companyId: string;
  id: string;
  listeners: Set<WatchListener>;
  ready: Promise<() => void>;
  reading: boolean;
  /** A notification arrived during a read, whose result may predate it: read again after. */
  again: boolean;
}

/** Makes the watcher of one process. */
export function createHandoffWatcher(db: Db, notifier: ChangeNotifier): HandoffWatcher {
  const watches = createStringMap<Watch>();
  /**
   * The subscription to a TRUNCATE of the records (migration 0025), which names no record: every watch reads
   * again, so its waiters hear of the record's end at once instead of at their deadline (up to 30 s).
   */
  let truncations: Promise<() => void> | undefined;

  function hearTruncations(): void {
    if (truncations) return;
    truncations = notifier.subscribe(TRUNCATED_KEY, () => {
      for (const watch of watches.values()) void refresh(watch);
    });
    // Not heard: the next watch tries again; its waiters re-read at their deadline meanwhile.
    truncations.catch(() => {
      truncations = undefined;
    });
  }

  async function refresh(watch: Watch): Promise<void> {
    if (watch.reading) {
      watch.again = true;
      return;
    }
    watch.reading = true;
    try {
      do {
        watch.again = false;
        let row: HandoffRow | undefined;
        try {
          row = await findHandoff(db, watch.companyId, watch.id);
        } catch {
          // The database is unreachable: waiters keep waiting, and re-read themselves at their deadline.
          continue;
        }
        for (const listener of [...watch.listeners]) listener(row);
      } while (watch.again && watch.listeners.size > 0);
    } finally {
      watch.reading = false;
    }
  }

  function release(key: string, watch: Watch, listener: WatchListener): void {
    watch.listeners.delete(listener);
    if (watch.listeners.size > 0 || watches.get(key) !== watch) return;
    watches.delete(key);
    watch.ready.then(
      (unsubscribe) => unsubscribe(),
      () => {},
    );
  }

  return {
    async watch(companyId, id, listener) {
      const key = `${companyId}:${id}`;
      let watch = watches.get(key);
      if (!watch) {
        hearTruncations();
        const created: Watch = {
          companyId,
          id,
          listeners: new Set(),
          ready: Promise.resolve(() => {}),
          reading: false,
          again: false,
        };
        created.ready = notifier.subscribe(key, () => {
          void refresh(created);
        });
        watches.set(key, created);
        watch = created;
      }
      const current = watch;
      current.listeners.add(listener);
      try {
        await current.ready;
      } catch (error) {
        if (watches.get(key) === current) watches.delete(key);
        current.listeners.delete(listener);
        throw error;
      }
      return () => release(key, current, listener);
    },
    get watched() {
      return watches.size;
    },
  };
}
