/**
 * The per-process cache of handoff records, so polls cost no query. A final record never changes, but it
 * can be erased (with its call, decision 26) by any process: every process hears the deletion (the
 * `call_handoffs` trigger notifies `*deleted:<company_id>:<id>` on DELETE, migration 0010) and forgets the
 * entry. A partial record changes: every change notifies `<company_id>:<id>` (migration 0002), on which
 * every process forgets its copy; the process that wrote forgets it at once (`forget`, after commit), so
 * its own clients read their writes, and another process serves the old version only until it hears the
 * notice (milliseconds). So that no change is missed, a record is cached only while notifications are
 * heard, and only when nothing of it (nor a possible loss of notifications) was heard between the start of
 * the read that found it and the moment it would be stored: the read could have seen the row just before
 * it changed or went.
 */
import type { ByteBound, LruCache } from '../../adapters/cache/lru.ts';
import type { ChangeNotifier } from '../../adapters/notify/notifier.ts';
import type { Handoff } from './records.ts';

/** Handoff records by `<company_id>:<id>`: final ones (`get`) and, apart, partial ones (`getPartial`). */
export interface FinalRecordCache {
  get(key: string): Handoff | undefined;
  /**
   * Starts a read of `key` from the database. The returned `keep` must be called once the read is over,
   * with the final record it found (cached unless it may have been erased since the read started) or
   * undefined (nothing to cache).
   */
  beginRead(key: string): (handoff: Handoff | undefined) => void;
  /** The partial record of `key`, when one is cached. */
  getPartial(key: string): Handoff | undefined;
  /** Like `beginRead`, for a partial record (not kept if it may have changed since the read started). */
  beginPartialRead(key: string): (handoff: Handoff | undefined) => void;
  /** Forgets the entry at once, final or partial (this process changed or erased it). */
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
/** The notification of a TRUNCATE of the records (migration 0025): every record may be gone. */
export const TRUNCATED_KEY = '*handoffs-truncated';

/** What a record's fields other than its metadata take, about: its ids, times and flags as JSON. */
const RECORD_OVERHEAD_BYTES = 200;

/**
 * The byte bound of a cache of records: each counts its metadata's JSON length, computed once as it is
 * cached (a read that missed the cache, so beside a query). A record may hold 5 MiB (MAX_METADATA_BYTES);
 * a bound by count alone let 10,000 of them take gigabytes of every reader's process.
 */
export function handoffBytes(maxBytes: number): ByteBound<Handoff> {
  return {
    maxBytes,
    sizeOf: (handoff) => RECORD_OVERHEAD_BYTES + JSON.stringify(handoff.view.metadata).length,
  };
}

/** Makes the cache over `lru` (final records) and `partialLru`, kept in step through `notifier`. */
export function createFinalRecordCache(
  lru: LruCache<Handoff>,
  notifier: ChangeNotifier,
  partialLru?: LruCache<Handoff>,
): FinalRecordCache {
  const pending = new Set<PendingRead>();
  const pendingPartial = new Set<PendingRead>();
  let subscription: Promise<() => void> | undefined;
  let closed = false;

  function heard(key: string | undefined): void {
    if (key === undefined || key === TRUNCATED_KEY) {
      // Notifications may have been lost, or every record deleted: nothing cached can be trusted any more.
      lru.clear();
      partialLru?.clear();
      for (const read of pending) read.stale = true;
      for (const read of pendingPartial) read.stale = true;
      return;
    }
    if (key.startsWith(DELETED_PREFIX)) forget(key.slice(DELETED_PREFIX.length));
    else if (!key.startsWith('*')) forgetPartial(key);
  }

  function forgetPartial(key: string): void {
    partialLru?.delete(key);
    for (const read of pendingPartial) if (read.key === key) read.stale = true;
  }

  function forget(key: string): void {
    lru.delete(key);
    for (const read of pending) if (read.key === key) read.stale = true;
    forgetPartial(key);
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

  function begin(into: LruCache<Handoff> | undefined, reads: Set<PendingRead>, key: string) {
    listen();
    if (!into || closed || !notifier.listening) return IGNORE;
    const read: PendingRead = { key, stale: false };
    reads.add(read);
    return (handoff: Handoff | undefined) => {
      if (!reads.delete(read)) return;
      if (handoff && !read.stale && notifier.listening && !closed) into.set(key, handoff);
    };
  }

  return {
    get: (key) => lru.get(key),
    beginRead: (key) => begin(lru, pending, key),
    getPartial: (key) => partialLru?.get(key),
    beginPartialRead: (key) => begin(partialLru, pendingPartial, key),
    forget,
    get size() {
      return lru.size;
    },
    close() {
      closed = true;
      lru.clear();
      partialLru?.clear();
      subscription?.then(
        (unsubscribe) => unsubscribe(),
        () => {},
      );
    },
  };
}
