/** A bounded least-recently-used map, for handoff records (final ones, and partial ones until they change). */

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

/** Makes a cache of at most `capacity` entries; capacity 0 caches nothing. */
export function createLruCache<V>(capacity: number): LruCache<V> {
  // A Map iterates in insertion order, so re-inserting on every hit keeps the oldest entry first.
  const entries = new Map<string, V>();
  return {
    get(key) {
      const value = entries.get(key);
      if (value === undefined) return undefined;
      entries.delete(key);
      entries.set(key, value);
      return value;
    },
    set(key, value) {
      if (capacity <= 0) return;
      entries.delete(key);
      entries.set(key, value);
      while (entries.size > capacity) {
        const oldest = entries.keys().next();
        if (oldest.done) break;
        entries.delete(oldest.value);
      }
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
