/** Change notifications on the embedded database: PGlite's own LISTEN, on its single connection. */
import type { PGlite } from '@electric-sql/pglite';
import { type ChangeNotifier, createFanOut, HANDOFF_CHANNEL } from './notifier.ts';

/** A notifier for the embedded database; listens from the first subscription on. */
export function createPgliteNotifier(pglite: PGlite): ChangeNotifier {
  const fanOut = createFanOut();
  let listening: Promise<() => Promise<void>> | undefined;
  let closed = false;
  let active = false;
  async function listenFor(unsubscribe: () => void): Promise<() => void> {
    try {
      listening ??= pglite.listen(HANDOFF_CHANNEL, (payload) => fanOut.dispatch(payload));
      await listening;
      active = !closed;
    } catch (error) {
      listening = undefined;
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
      return active;
    },
    async close() {
      if (closed) return;
      closed = true;
      active = false;
      const pending = listening;
      listening = undefined;
      fanOut.dispatchAll();
      if (pending) {
        try {
          await (await pending)();
        } catch {
          // The database may already be closing; nothing is left to unlisten then.
        }
      }
    },
  };
}
