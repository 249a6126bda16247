/** Starts the job worker of a service process (WORKER=true): the queue's jobs and the periodic sweeps. */
import { createMediaInfoProber } from '../adapters/probe/mediainfo.ts';
import type { Services } from '../services.ts';
import { jobHandlers, periodicTasks } from './jobs.ts';
import { startWorker, type Worker, type WorkerLog } from './worker.ts';

/** Starts the worker; its stop() waits for the jobs in flight and releases the prober. */
export function startServiceWorker(services: Services, log: WorkerLog): Worker {
  const prober = createMediaInfoProber();
  const worker = startWorker({
    queue: services.queue,
    handlers: jobHandlers(services, prober),
    log,
    pollIntervalMs: services.config.workerPollIntervalMs,
    concurrency: services.config.workerConcurrency,
    periodic: periodicTasks(services),
  });
  return {
    async stop() {
      await worker.stop();
      prober.close();
    },
  };
}
