/** Change notifications on the embedded database: PGlite's own LISTEN, on its single connection. */
import type { PGlite } from '@electric-sql/pglite';
import { type ChangeNotifier, createFanOut, HANDOFF_CHANNEL } from './notifier.ts';

/** A notifier for the embedded database; listens from the first subscription on. */
export function createPgliteNotifier(pglite: PGlite): ChangeNotifier {
  const fanOut = createFanOut();
  let listening: Promise<() => Promise<void>> | undefined;
  let closed = false;
  return {
    async subscribe(key, listener) {
      if (closed) throw new Error('change notifier is closed');
      const unsubscribe = fanOut.add(key, listener);
      try {
        listening ??= pglite.listen(HANDOFF_CHANNEL, (payload) => fanOut.dispatch(payload));
        await listening;
      } catch (error) {
        listening = undefined;
        unsubscribe();
        throw error;
      }
      return unsubscribe;
    },
    async close() {
      if (closed) return;
      closed = true;
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
