/** The service's jobs: which handler runs each kind, and the periodic tasks that queue the sweeps. */
import type { MediaProber } from '../adapters/probe/mediainfo.ts';
import { SWEEP_UPLOADS_JOB, sweepUploads } from '../domain/upload-sweep.ts';
import { verifyUpload } from '../domain/upload-verification.ts';
import { VERIFY_UPLOAD_JOB } from '../domain/uploads.ts';
import type { Services } from '../services.ts';
import { type JobHandler, type PeriodicTask, PermanentJobError } from './worker.ts';

/** The handler of every job kind. */
export function jobHandlers(services: Services, prober: MediaProber): Record<string, JobHandler> {
  const { database, storage, queue, config } = services;
  return {
    async [VERIFY_UPLOAD_JOB](job) {
      const uploadId = job.payload.uploadId;
      if (!job.companyId || typeof uploadId !== 'number') {
        throw new PermanentJobError('verify job without a company or an upload id');
      }
      await verifyUpload({ db: database.db, storage, prober }, job.companyId, uploadId);
    },
    async [SWEEP_UPLOADS_JOB]() {
      await sweepUploads(
        { db: database.db, storage, queue },
        { expiryGraceSeconds: config.uploads.expiryGraceSeconds },
      );
    },
  };
}

/** Queues the upload sweep every UPLOAD_SWEEP_INTERVAL; with several processes, one sweep is queued. */
export function periodicTasks(services: Services): PeriodicTask[] {
  const { database, queue, config } = services;
  return [
    {
      name: SWEEP_UPLOADS_JOB,
      everyMs: config.uploads.sweepIntervalSeconds * 1000,
      async run() {
        if (await queue.enqueue(database.db, { kind: SWEEP_UPLOADS_JOB, dedupeKey: SWEEP_UPLOADS_JOB })) {
          queue.notify();
        }
      },
    },
  ];
}
