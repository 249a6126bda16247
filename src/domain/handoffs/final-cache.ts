/**
 * The per-process cache of final handoff records. A final record never changes, but it can be erased
 * (with its call, decision 26) by any process: every process hears the deletion (the `call_handoffs`
 * trigger notifies `*deleted:<company_id>:<id>` on DELETE, migration 0010) and forgets the entry. So that
 * no erasure is missed, a record is cached only while notifications are heard, and only when no deletion
 * of it (nor a possible loss of notifications) was heard between the start of the read that found it and
 * the moment it would be stored: the read could have seen the row just before it went.
 */
import type { LruCache } from '../../adapters/cache/lru.ts';
import type { ChangeNotifier } from '../../adapters/notify/notifier.ts';
import type { Handoff } from './records.ts';

/** Final handoff records by `<company_id>:<id>`, dropped in every process when erased. */
export interface FinalRecordCache {
  get(key: string): Handoff | undefined;
  /**
   * Starts a read of `key` from the database. The returned `keep` must be called once the read is over,
   * with the final record it found (cached unless it may have been erased since the read started) or
   * undefined (nothing to cache).
   */
  beginRead(key: string): (handoff: Handoff | undefined) => void;
  /** Forgets the entry at once (this process erased it). */
  forget(key: string): void;
  readonly size: number;
  /** Stops listening. */
  close(): void;
}

interface PendingRead {
  key: string;
  stale: boolean;
}

const IGNORE = () => {};
/** The key prefix of the notification a deleted record sends (see migration 0010). */
export const DELETED_PREFIX = '*deleted:';

/** Makes the cache over `lru`, kept in step with the database through `notifier`. */
export function createFinalRecordCache(lru: LruCache<Handoff>, notifier: ChangeNotifier): FinalRecordCache {
  const pending = new Set<PendingRead>();
  let subscription: Promise<() => void> | undefined;
  let closed = false;

  function heard(key: string | undefined): void {
    if (key === undefined) {
      // Notifications may have been lost: nothing cached can be trusted any more.
      lru.clear();
      for (const read of pending) read.stale = true;
      return;
    }
    if (!key.startsWith(DELETED_PREFIX)) return;
    forget(key.slice(DELETED_PREFIX.length));
  }

  function forget(key: string): void {
    lru.delete(key);
    for (const read of pending) if (read.key === key) read.stale = true;
  }

  function listen(): void {
    if (subscription || closed) return;
    subscription = notifier.subscribeAll(heard);
    // Not listening yet means nothing is cached; the next read tries again.
    subscription.catch(() => {
      subscription = undefined;
    });
  }
  listen();

  return {
    get: (key) => lru.get(key),
    beginRead(key) {
      listen();
      if (closed || !notifier.listening) return IGNORE;
      const read: PendingRead = { key, stale: false };
      pending.add(read);
      return (handoff) => {
        if (!pending.delete(read)) return;
        if (handoff && !read.stale && notifier.listening && !closed) lru.set(key, handoff);
      };
    },
    forget,
    get size() {
      return lru.size;
    },
    close() {
      closed = true;
      lru.clear();
      subscription?.then(
        (unsubscribe) => unsubscribe(),
        () => {},
      );
    },
  };
}
