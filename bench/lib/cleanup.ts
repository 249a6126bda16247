/** Things to undo when a run ends or is interrupted: child processes, databases, temp folders. */

type Undo = () => Promise<void> | void;
const pending = new Set<Undo>();

/** Registers `undo`; the returned function runs it (once) and unregisters it. */
export function deferCleanup(undo: Undo): () => Promise<void> {
  let done = false;
  const run = async () => {
    if (done) return;
    done = true;
    pending.delete(undo);
    await undo();
  };
  pending.add(undo);
  return run;
}

/** Runs every registered undo, newest first, ignoring failures. */
export async function cleanupAll(): Promise<void> {
  for (const undo of [...pending].reverse()) {
    pending.delete(undo);
    try {
      await undo();
    } catch {
      // best effort: the run is ending anyway
    }
  }
}
