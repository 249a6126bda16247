/**
 * The periodic sweep that finalizes stale call-handoff records, so no reader waits forever. A timer in
 * each worker process, not the job queue: the sweep is one idempotent UPDATE that skips locked rows, so
 * several processes sweeping at once is harmless and needs no coordination.
 */
import type { Db } from '../adapters/db/database.ts';
import { finalizeStaleHandoffRecords } from '../domain/handoffs/records.ts';

/** Where the sweeper reports. */
export interface SweepLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/** A running sweeper. */
export interface HandoffSweeper {
  /** Sweeps now (waiting for a sweep in progress first); returns how many records it finalized. */
  sweepNow(): Promise<number>;
  /** Stops the timer and waits for a sweep in progress. */
  stop(): Promise<void>;
}

/** Starts sweeping at once and then every `intervalSeconds`. */
export function startHandoffSweeper(options: {
  db: Db;
  staleAfterSeconds: number;
  intervalSeconds: number;
  log: SweepLog;
}): HandoffSweeper {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> = Promise.resolve(0);
  let stopped = false;

  function sweep(): Promise<number> {
    // Chained, so two sweeps of one process never run at once.
    running = running
      .catch(() => 0)
      .then(async () => {
        try {
          const count = await finalizeStaleHandoffRecords(options.db, options.staleAfterSeconds);
          if (count > 0) options.log.info({ count }, 'finalized stale call handoff records');
          return count;
        } catch (error) {
          options.log.warn({ err: error }, 'stale call handoff sweep failed; retrying at the next interval');
          return 0;
        }
      });
    return running;
  }

  function schedule(delayMs: number): void {
    if (stopped) return;
    timer = setTimeout(() => {
      void sweep().finally(() => schedule(options.intervalSeconds * 1000));
    }, delayMs);
    timer.unref();
  }

  schedule(0);
  return {
    sweepNow: sweep,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running.catch(() => 0);
    },
  };
}
