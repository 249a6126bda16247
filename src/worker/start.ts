/**
 * Starts the job worker of a service process (WORKER=true): the queue's jobs and the periodic sweeps, and
 * two workers with slots of their own, so that slow work never holds up uploads: the webhooks' (slow
 * receivers; with its fan-out loop) and the transcriptions' (an engine may take TRANSCRIBER_TIMEOUT per
 * request, and shared slots held two transcriptions there while a new upload waited 38 s to be verified).
 */
import { createMediaInfoProber } from '../adapters/probe/mediainfo.ts';
import { removeOrphanedWorkDirs } from '../adapters/work-dir.ts';
import { TRANSCRIBE_CALL_JOB } from '../domain/transcription/transcription.ts';
import { deliveryJobLeaseSeconds, WEBHOOK_DELIVER_JOB } from '../domain/webhooks/delivery.ts';
import type { Services } from '../services.ts';
import { jobHandlers, periodicTasks } from './jobs.ts';
import { startWebhookDispatcher } from './webhook-dispatcher.ts';
import { startWorker, type Worker, type WorkerLog } from './worker.ts';

/** At least this long between two claims of the main worker (a quiet queue's claim is made at once). */
const CLAIM_INTERVAL_MS = 20;

/** Starts the workers; stop() waits for the jobs in flight and releases the prober. */
export function startServiceWorker(services: Services, log: WorkerLog): Worker {
  // What jobs of processes killed meanwhile left in the temporary folder.
  removeOrphanedWorkDirs().then(
    (removed) => removed > 0 && log.info({ removed }, 'removed the temporary files of stopped processes'),
    (error: unknown) => log.warn({ err: error }, 'could not remove the temporary files of stopped processes'),
  );
  const prober = createMediaInfoProber();
  const handlers = jobHandlers(services, prober, log);
  const webhookKinds = [WEBHOOK_DELIVER_JOB];
  const transcriptionKinds = [TRANSCRIBE_CALL_JOB];
  const worker = startWorker({
    queue: services.queue,
    handlers,
    log,
    pollIntervalMs: services.config.workerPollIntervalMs,
    concurrency: services.config.workerConcurrency,
    periodic: periodicTasks(services),
    kinds: { except: [...webhookKinds, ...transcriptionKinds] },
    // Under load, the analyses of the transcripts that calls bring are claimed together and run as a batch.
    minClaimIntervalMs: CLAIM_INTERVAL_MS,
  });
  const webhookWorker = startWorker({
    queue: services.queue,
    handlers,
    log,
    pollIntervalMs: services.config.workerPollIntervalMs,
    concurrency: services.config.webhooks.concurrency,
    kinds: { only: webhookKinds },
    // Not the queue's 5 minutes: after a crash, an endpoint's deliveries resume once this claim ends.
    leaseSeconds: deliveryJobLeaseSeconds(services.config.webhooks),
  });
  const transcriptionWorker = startWorker({
    queue: services.queue,
    handlers,
    log,
    pollIntervalMs: services.config.workerPollIntervalMs,
    // As many transcriptions at once as engine requests (or recognisers): more would only wait for them.
    concurrency: services.config.transcriber.concurrency,
    kinds: { only: transcriptionKinds },
  });
  const dispatcher = startWebhookDispatcher(services, log);
  return {
    async stop() {
      await dispatcher.stop();
      await Promise.all([worker.stop(), webhookWorker.stop(), transcriptionWorker.stop()]);
      prober.close();
    },
  };
}
