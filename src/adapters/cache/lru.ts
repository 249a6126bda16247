/** A bounded least-recently-used map, for handoff records (final ones, and partial ones until they change). */
import { LRUCache } from 'lru-cache';

/** A map that forgets its least recently used entry when it grows past `capacity`. */
export interface LruCache<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  /** Forgets the entry (an erased record). */
  delete(key: string): void;
  /** Forgets every entry. */
  clear(): void;
  readonly size: number;
}

/** A bound on the bytes a cache holds, besides its count: each entry's size as `sizeOf` tells it. */
export interface ByteBound<V> {
  maxBytes: number;
  sizeOf(value: V): number;
}

/**
 * Makes a cache of at most `capacity` entries, and of at most `bytes.maxBytes` when given (an entry larger
 * than that is not kept); capacity 0 caches nothing. It is `lru-cache`, as the principal cache is: the Map
 * this replaced moved a hit to the back by deleting and re-adding it, and V8 made that cost 4-33 µs per read
 * once a full cache of 10,000 records was read mostly at a few keys (an agent's poll of one record), against
 * 0.1-0.2 µs here (issue 16). lru-cache sets aside its arrays for `capacity` at once.
 */
export function createLruCache<V extends object | number | string | boolean>(
  capacity: number,
  bytes?: ByteBound<V>,
): LruCache<V> {
  if (capacity <= 0 || (bytes && bytes.maxBytes <= 0)) {
    return { get: () => undefined, set() {}, delete() {}, clear() {}, size: 0 };
  }
  const entries = new LRUCache<string, V>({
    max: capacity,
    // lru-cache refuses a size of 0; every entry costs at least its slot.
    ...(bytes
      ? { maxSize: bytes.maxBytes, sizeCalculation: (value: V) => Math.max(1, bytes.sizeOf(value)) }
      : {}),
  });
  return {
    get: (key) => entries.get(key),
    set(key, value) {
      entries.set(key, value);
    },
    delete(key) {
      entries.delete(key);
    },
    clear() {
      entries.clear();
    },
    get size() {
      return entries.size;
    },
  };
}
