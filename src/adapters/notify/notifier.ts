/**
 * Change notifications: the database says "this record changed" (a trigger NOTIFYs on commit) and every
 * process that has waiters for it hears so. One listening connection per process; waiters are fanned
 * out in memory, so a thousand long polls cost one connection, not a thousand queries a second.
 */

import { createStringMap } from '../cache/string-map.ts';

/** The channel the `call_handoffs` trigger notifies; the payload is `<company_id>:<id>`. */
export const HANDOFF_CHANNEL = 'call_handoff_changed';

/** Hears the database's change notifications and hands them to in-process subscribers. */
export interface ChangeNotifier {
  /**
   * Calls `listener` whenever `key` (a notification payload) is notified, and also when notifications
   * may have been missed (after a lost connection), so a listener must re-read rather than trust that
   * something changed. Resolves once listening is active: a change committed after that is heard.
   * Returns the function that unsubscribes.
   */
  subscribe(key: string, listener: () => void): Promise<() => void>;
  /**
   * Calls `listener` with the key of every notification, and with undefined whenever notifications may
   * have been missed (a lost connection, closing). Resolves once listening is active.
   */
  subscribeAll(listener: (key: string | undefined) => void): Promise<() => void>;
  /** True while notifications are heard: false before the first subscription, after a loss, once closed. */
  readonly listening: boolean;
  /** Stops listening; subscribers are called once more so that nobody waits on a closed notifier. */
  close(): Promise<void>;
}

/** Subscribers by key, shared by the notifier implementations. */
export interface FanOut {
  add(key: string, listener: () => void): () => void;
  /** Adds a listener of every key (called with undefined by `dispatchAll`). */
  addAny(listener: (key: string | undefined) => void): () => void;
  /** Calls the listeners of one key. */
  dispatch(key: string): void;
  /** Calls every listener (notifications may have been lost). */
  dispatchAll(): void;
  readonly size: number;
}

function safely(listener: () => void): void {
  try {
    listener();
  } catch {
    // One broken listener must not keep the others from hearing of the change.
  }
}

/** Makes an empty set of subscribers. */
export function createFanOut(): FanOut {
  const byKey = createStringMap<Set<() => void>>();
  const any = new Set<(key: string | undefined) => void>();
  let size = 0;
  return {
    add(key, listener) {
      let set = byKey.get(key);
      if (!set) {
        set = new Set();
        byKey.set(key, set);
      }
      // Wrapped so that the same function subscribed twice is two subscriptions.
      const entry = () => listener();
      set.add(entry);
      size++;
      let removed = false;
      return () => {
        if (removed) return;
        removed = true;
        size--;
        set.delete(entry);
        if (set.size === 0 && byKey.get(key) === set) byKey.delete(key);
      };
    },
    addAny(listener) {
      const entry = (key: string | undefined) => listener(key);
      any.add(entry);
      size++;
      return () => {
        if (any.delete(entry)) size--;
      };
    },
    dispatch(key) {
      const set = byKey.get(key);
      if (set) for (const listener of [...set]) safely(listener);
      for (const listener of [...any]) safely(() => listener(key));
    },
    dispatchAll() {
      for (const set of byKey.values()) for (const listener of [...set]) safely(listener);
      for (const listener of [...any]) safely(() => listener(undefined));
    },
    get size() {
      return size;
    },
  };
}
