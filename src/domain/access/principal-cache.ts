/**
 * Key → principal in memory, so an authenticated request costs no query, and the products a user sees
 * likewise (the product list is then answered without one). Still correct: every process
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
import type { ProductView } from './products.ts';

/** The notifier key of the access triggers (migration 0011_access_notify). */
export const ACCESS_NOTIFY_KEY = '*access';

/** Milliseconds an entry is kept at most, even when no change was heard. */
export const PRINCIPAL_MAX_AGE_MS = 60_000;

/** Milliseconds between two attempts to subscribe when the notifier could not listen. */
const RESUBSCRIBE_DELAY_MS = 1000;

/**
 * The cache of principals by API key, as the client sent it. Not by its hash: hashing was most of an
 * authenticated request's own cost, and the keys in memory expose nothing the process's database
 * credentials (which it must hold) do not already; only the database stores keys, and only hashed.
 */
export interface PrincipalCache {
  /** The principal of `key`: from memory, or from `load` (cached when it is found). */
  lookup(key: string, load: () => Promise<Principal>): Promise<Principal>;
  /** The principal of `key` when it is in memory and may be trusted now; no promise, no query. */
  peek(key: string): Principal | undefined;
  /** The products `principal`'s user sees when they are in memory and may be trusted now; no promise. */
  peekProducts(principal: Principal): ProductView[] | undefined;
  /** The products `principal`'s user sees: from memory, or from `load` (cached likewise). */
  products(principal: Principal, load: () => Promise<ProductView[]>): Promise<ProductView[]>;
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
  const maxAge = options.maxAgeMs ?? PRINCIPAL_MAX_AGE_MS;
  const entries = capacity > 0 ? new LRUCache<string, Principal>({ max: capacity, ttl: maxAge }) : undefined;
  const productLists =
    capacity > 0 ? new LRUCache<string, ProductView[]>({ max: capacity, ttl: maxAge }) : undefined;
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
    productLists?.clear();
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

  /** The value of `key` in `map`, or what `load` finds (kept, frozen, unless a change came meanwhile). */
  async function cached<T extends object>(
    map: LRUCache<string, T> | undefined,
    key: string,
    load: () => Promise<T>,
    freeze: (value: T) => T,
  ): Promise<T> {
    if (!map) return load();
    subscribe();
    if (!trusted()) return load();
    const hit = map.get(key);
    if (hit) return hit;
    const before = generation;
    const value = await load();
    // Shared by every request from now on: nobody may change it in place.
    if (generation === before && trusted()) map.set(key, freeze(value));
    return value;
  }

  /** The value of `key` in `map` when it may be trusted now. */
  function peekIn<T extends object>(map: LRUCache<string, T> | undefined, key: string): T | undefined {
    if (!map) return undefined;
    subscribe();
    return trusted() ? map.get(key) : undefined;
  }
  // By user and role: what a user sees depends on the role and grants, not on which of their keys asks. The
  // role is the one the request was authenticated with, and a request authenticated before a role change
  // may load its list after the change: keyed by role, its list is only ever served to that role.
  const productsKey = (principal: Principal) =>
    `${principal.companyId}:${principal.userId}:${principal.role}`;

  return {
    peek: (key) => peekIn(entries, key),
    peekProducts: (principal) => peekIn(productLists, productsKey(principal)),
    lookup(key, load) {
      return cached(entries, key, load, (principal) => {
        Object.freeze(principal.scopes);
        return Object.freeze(principal);
      });
    },
    products(principal, load) {
      const freeze = (list: ProductView[]) =>
        Object.freeze(list.map((p) => Object.freeze(p))) as ProductView[];
      return cached(productLists, productsKey(principal), load, freeze);
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
