/**
 * The worker loop: claims due jobs from the queue and runs them, a few at a time. It polls, and also wakes
 * at once when this process enqueues a job. Periodic tasks (such as enqueueing sweeps) run on timers.
 * Stopping waits for the jobs in flight, so none is cut off half way.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Job, JobQueue, KindFilter } from '../adapters/queue/queue.ts';

/**
 * What a handler returns when the statement that stored its work also completed the job (one commit
 * instead of two); the worker then completes nothing.
 */
export const JOB_COMPLETED = 'completed';

/**
 * Runs one kind of job. Throwing retries the job later; a PermanentJobError does not. `giveUp` records
 * what the job was for as failed once the job will not run again: its last attempt threw (anything but a
 * PermanentJobError, whose failure the handler recorded), or it died without a run (its last attempt's
 * worker stopped).
 */
// biome-ignore lint/suspicious/noConfusingVoidType: handlers that complete nothing themselves return nothing.
export type JobHandler = ((job: Job) => Promise<void | typeof JOB_COMPLETED>) & {
  giveUp?: (job: Job, error: unknown) => Promise<void>;
};

/** A failure that retrying cannot fix. */
export class PermanentJobError extends Error {
  override name = 'PermanentJobError';
}

/** The subset of a pino logger the worker writes to. */
export interface WorkerLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}

/** A task the worker runs every `everyMs`, and once at start. */
export interface PeriodicTask {
  name: string;
  everyMs: number;
  run(): Promise<void>;
}

/** Options of a worker. */
export interface WorkerOptions {
  queue: JobQueue;
  handlers: Record<string, JobHandler>;
  log: WorkerLog;
  pollIntervalMs: number;
  concurrency: number;
  periodic?: PeriodicTask[];
  /** The kinds of job this worker takes (all by default). */
  kinds?: KindFilter;
  /** Seconds a claim lasts (the queue's default unless given): how soon a dead worker's job runs again. */
  leaseSeconds?: number;
  /**
   * Milliseconds at least between two claims (0 by default). A claim after a quiet spell is made at once;
   * under load the jobs queued meanwhile are claimed together, so a handler can take them as one batch.
   */
  minClaimIntervalMs?: number;
}

/** A running worker. */
export interface Worker {
  /** Stops claiming, waits for the jobs in flight, and returns. */
  stop(): Promise<void>;
}

/**
 * Runs one claimed job and records its outcome. Never throws. While the handler runs, the job's lease is
 * renewed every third of `leaseSeconds` (the queue's own by default): a run longer than its lease (a
 * long recording's analysis, a transcription's engine, a retention sweep) was claimed again by another
 * worker and ran twice at once.
 */
export async function runJob(
  queue: JobQueue,
  handlers: Record<string, JobHandler>,
  job: Job,
  log: WorkerLog,
  leaseSeconds: number = queue.leaseSeconds,
): Promise<void> {
  const context = { jobId: job.id, kind: job.kind, attempt: job.attempts };
  let running = true;
  const renewal = setInterval(
    () => {
      queue.renew(job, leaseSeconds).then(
        (held) => held || !running || log.warn(context, 'lost the lease of a running job'),
        (error: unknown) =>
          log.warn({ ...context, err: error }, 'could not renew the lease of a running job'),
      );
    },
    Math.max(250, (leaseSeconds * 1000) / 3),
  );
  const finished = () => {
    running = false;
    clearInterval(renewal);
  };
  const handler = handlers[job.kind];
  // Not run again (it may be what stopped its worker), but what it was for must not stay pending.
  const diedWithoutRun = job.attempts > job.maxAttempts;
  try {
    if (!handler) throw new PermanentJobError(`no handler for job kind ${job.kind}`);
    if (diedWithoutRun)
      throw new PermanentJobError('the worker of its last attempt stopped before finishing it');
    const result = await handler(job);
    finished();
    if (result !== JOB_COMPLETED && (await queue.complete(job))) queue.notify([job.kind]);
  } catch (error) {
    finished();
    const lastAttempt = !(error instanceof PermanentJobError) && job.attempts >= job.maxAttempts;
    if (handler?.giveUp && (diedWithoutRun || lastAttempt)) {
      await handler.giveUp(job, error).catch((giveUpError: unknown) => {
        log.error({ ...context, err: giveUpError }, 'could not record that a job gave up');
      });
    }
    try {
      const outcome = await queue.fail(job, error, {
        permanent: error instanceof PermanentJobError,
        ...retryAtOf(error),
      });
      const level = outcome === 'dead' ? 'error' : 'warn';
      log[level]({ ...context, err: error, outcome }, `job failed (${outcome})`);
    } catch (failError) {
      // The database is away: the lease runs out and another attempt follows.
      log.error({ ...context, err: failError }, 'could not record a job failure');
    }
  }
}

/** The time an error names for the next attempt (a `retryAt` Date, as a server's Retry-After gives). */
function retryAtOf(error: unknown): { retryAt?: Date } {
  const retryAt = (error as { retryAt?: unknown } | null)?.retryAt;
  return retryAt instanceof Date && !Number.isNaN(retryAt.getTime()) ? { retryAt } : {};
}

/** Claims and runs due jobs one by one until none is due; returns how many ran. Tests use it to drain. */
export async function runDueJobs(
  queue: JobQueue,
  handlers: Record<string, JobHandler>,
  log: WorkerLog,
  maxJobs = 1000,
): Promise<number> {
  let ran = 0;
  while (ran < maxJobs) {
    const [job] = await queue.claim(1);
    if (!job) break;
    await runJob(queue, handlers, job, log);
    ran++;
  }
  return ran;
}

/** Starts the worker loop. */
export function startWorker(options: WorkerOptions): Worker {
  const { queue, handlers, log, pollIntervalMs, concurrency } = options;
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  // Set by a wake-up that arrives while the loop is busy, so the next wait returns at once.
  let poked = false;
  let wake: (() => void) | undefined;
  const poke = () => {
    poked = true;
    wake?.();
  };
  // Set when a claim found fewer jobs than it asked for: a job that ends then needs no claim of its own
  // (it would find nothing); a wake-up (a job queued here) or the poll claims next.
  let drained = false;
  const unsubscribe = queue.onNotify(() => {
    drained = false;
    poke();
  }, options.kinds);

  const waitForWork = () =>
    new Promise<void>((resolve) => {
      if (poked || stopped) return resolve();
      const timer = setTimeout(done, pollIntervalMs);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });

  const minClaimInterval = options.minClaimIntervalMs ?? 0;
  let lastClaimAt = Number.NEGATIVE_INFINITY;
  const loop = (async () => {
    while (!stopped) {
      poked = false;
      const free = concurrency - inFlight.size;
      if (free > 0) {
        const early = lastClaimAt + minClaimInterval - performance.now();
        if (early > 0) await sleep(early);
        lastClaimAt = performance.now();
        try {
          const claimed = await queue.claim(free, options.kinds, options.leaseSeconds);
          drained = claimed.length < free;
          for (const job of claimed) {
            const running: Promise<void> = runJob(queue, handlers, job, log, options.leaseSeconds).finally(
              () => {
                inFlight.delete(running);
                if (!drained) poke();
              },
            );
            inFlight.add(running);
          }
        } catch (error) {
          log.warn({ err: error }, 'could not claim jobs; retrying');
        }
      }
      await waitForWork();
    }
  })();

  const periodicRuns = new Set<Promise<void>>();
  const timers = (options.periodic ?? []).map((task) => {
    let running = false;
    const tick = () => {
      if (running || stopped) return;
      running = true;
      const run: Promise<void> = task
        .run()
        .catch((error: unknown) => log.warn({ err: error, task: task.name }, 'periodic task failed'))
        .finally(() => {
          running = false;
          periodicRuns.delete(run);
        });
      periodicRuns.add(run);
    };
    tick();
    return setInterval(tick, task.everyMs);
  });

  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        stopped = true;
        for (const timer of timers) clearInterval(timer);
        unsubscribe();
        poke();
        await loop;
        await Promise.all([...inFlight, ...periodicRuns]);
      })();
      return stopping;
    },
  };
}
