/**
 * Key → principal in memory, so an authenticated request costs no query, and still correct: every process
 * forgets every entry when a key, a user, a product or a grant changes (the database NOTIFYs "*access" at
 * commit, migration 0011_access_notify, heard through the change notifier; this process's own writes are
 * seen at once through `Database.onAccessWrite`). It fails safe: entries are kept only while the notifier
 * listens (a lost connection clears everything and nothing is cached until it is back), and no entry
 * outlives a maximum age even then, as a backstop.
 */
import { LRUCache } from 'lru-cache';
import type { Database } from '../../adapters/db/database.ts';
import type { ChangeNotifier } from '../../adapters/notify/notifier.ts';
import type { Principal } from './principal.ts';

/** The notifier key of the access triggers (migration 0011_access_notify). */
export const ACCESS_NOTIFY_KEY = '*access';

/** Milliseconds an entry is kept at most, even when no change was heard. */
export const PRINCIPAL_MAX_AGE_MS = 60_000;

/** Milliseconds between two attempts to subscribe when the notifier could not listen. */
const RESUBSCRIBE_DELAY_MS = 1000;

/** The cache of principals by key hash. */
export interface PrincipalCache {
  /** The principal of `keyHash`: from memory, or from `load` (cached when it is found). */
  lookup(keyHash: string, load: () => Promise<Principal>): Promise<Principal>;
  /** Forgets every entry. */
  clear(): void;
  readonly size: number;
  /** Stops listening for changes. */
  close(): void;
}

/** Options of the cache. */
export interface PrincipalCacheOptions {
  database: Pick<Database, 'onAccessWrite'>;
  notifier: ChangeNotifier;
  /** Entries at most; 0 caches nothing (every request queries). */
  capacity: number;
  maxAgeMs?: number;
  onError?: (error: unknown) => void;
}

/** Makes the cache and starts listening for changes. */
export function createPrincipalCache(options: PrincipalCacheOptions): PrincipalCache {
  const { database, notifier, capacity } = options;
  const entries =
    capacity > 0
      ? new LRUCache<string, Principal>({ max: capacity, ttl: options.maxAgeMs ?? PRINCIPAL_MAX_AGE_MS })
      : undefined;
  // Bumped by every clear: a look-up that began before a change must not store what it read.
  let generation = 0;
  let subscribed = false;
  let subscribing: Promise<void> | undefined;
  let nextAttempt = 0;
  let unsubscribe: (() => void) | undefined;
  let closed = false;

  const clear = () => {
    generation++;
    entries?.clear();
  };
  const stopLocal = database.onAccessWrite(clear);

  const subscribe = () => {
    if (!entries || closed || subscribed || subscribing || Date.now() < nextAttempt) return;
    subscribing = notifier.subscribe(ACCESS_NOTIFY_KEY, clear).then(
      (off) => {
        subscribing = undefined;
        if (closed) return off();
        subscribed = true;
        unsubscribe = off;
        // Whatever was cached before the subscription was active may have missed a notice.
        clear();
      },
      (error: unknown) => {
        subscribing = undefined;
        nextAttempt = Date.now() + RESUBSCRIBE_DELAY_MS;
        options.onError?.(error);
      },
    );
  };
  subscribe();

  const trusted = () => subscribed && notifier.listening;

  return {
    async lookup(keyHash, load) {
      if (!entries) return load();
      subscribe();
      if (!trusted()) return load();
      const hit = entries.get(keyHash);
      if (hit) return hit;
      const before = generation;
      const principal = await load();
      if (generation === before && trusted()) {
        // Shared by every request of this key from now on: nobody may change it in place.
        Object.freeze(principal.scopes);
        entries.set(keyHash, Object.freeze(principal));
      }
      return principal;
    },
    clear,
    get size() {
      return entries?.size ?? 0;
    },
    close() {
      closed = true;
      stopLocal();
      unsubscribe?.();
      clear();
    },
  };
}
