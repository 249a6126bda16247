/** The service's jobs: which handler runs each kind, and the periodic tasks that queue the sweeps. */
import { keepUpStatistics } from '../adapters/db/upkeep.ts';
import { findDecoder } from '../adapters/decode/ffmpeg.ts';
import type { MediaProber } from '../adapters/probe/mediainfo.ts';
import { type Job, purgeDeadJobs } from '../adapters/queue/queue.ts';
import { transcriberOf } from '../adapters/transcribe/factory.ts';
import {
  ANALYZE_CALL_JOB,
  giveUpAnalysis,
  type RunResult,
  runAnalysis,
} from '../domain/analysis/analysis.ts';
import {
  isTranscriptRun,
  runTranscriptAnalyses,
  TRANSCRIPT_BATCH,
  TRANSCRIPT_JOBS,
} from '../domain/analysis/transcript-runs.ts';
import { deleteInBatches } from '../domain/batches.ts';
import { deleteObjects, ERASE_OBJECTS_JOB } from '../domain/calls/erase.ts';
import { RETENTION_SWEEP_EVERY_MS, RETENTION_SWEEP_JOB, sweepRetention } from '../domain/calls/retention.ts';
import { PURGE_EVENTS_TASK, purgeExpiredEvents } from '../domain/events/retention.ts';
import {
  giveUpTranscription,
  runTranscription,
  TRANSCRIBE_CALL_JOB,
} from '../domain/transcription/transcription.ts';
import { RECHECK_UPLOAD_JOB, recheckUpload } from '../domain/uploads/recheck.ts';
import { SWEEP_UPLOADS_JOB, sweepUploads } from '../domain/uploads/sweep.ts';
import { VERIFY_UPLOAD_JOB } from '../domain/uploads/uploads.ts';
import { verifyUpload } from '../domain/uploads/verification.ts';
import { deliverEndpoint, WEBHOOK_DELIVER_JOB } from '../domain/webhooks/delivery.ts';
import { PURGE_DELIVERIES_TASK, purgeExpiredDeliveries } from '../domain/webhooks/retention.ts';
import type { Services } from '../services.ts';
import {
  JOB_COMPLETED,
  type JobHandler,
  type PeriodicTask,
  PermanentJobError,
  runJob,
  type WorkerLog,
} from './worker.ts';

/** The upload a job works on (payload `{uploadId}`); a job without one can never run. */
function uploadOf(job: Job): { companyId: string; uploadId: number } {
  const uploadId = job.payload.uploadId;
  if (!job.companyId || typeof uploadId !== 'number') {
    throw new PermanentJobError(`${job.kind} job without a company or an upload id`);
  }
  return { companyId: job.companyId, uploadId };
}

/** The handler of every job kind. */
export function jobHandlers(
  services: Services,
  prober: MediaProber,
  log: WorkerLog = { info() {}, warn() {}, error() {} },
): Record<string, JobHandler> {
  const { database, storage, queue, config } = services;
  const engine = transcriberOf(config.transcriber);

  /**
   * What becomes of an analysis job given its run's result: as the worker records any job's outcome (after
   * a last attempt that threw, the worker gives the run up: `giveUp`).
   */
  async function settleAnalysis(run: () => Promise<RunResult>) {
    const result = await run();
    // The failure is recorded on the call; the job is kept dead with the reason, never retried.
    if (result.status === 'failed') throw new PermanentJobError(result.reason);
    if (result.jobCompleted) return JOB_COMPLETED;
  }

  /**
   * A transcript's analysis takes the other transcripts' analyses that are due along (their own claim), and
   * runs them all in one read and one write; each of the others ends as if the worker had run it.
   */
  async function analyzeTranscripts(job: Job) {
    const others = await queue.claim(TRANSCRIPT_BATCH - 1, TRANSCRIPT_JOBS);
    // A claim past its last attempt (its worker died) is not run but declared dead by runJob, as alone.
    const runnable = others.filter((other) => other.attempts <= other.maxAttempts);
    const results = runTranscriptAnalyses(database.db, [job, ...runnable]);
    // Each job awaits it below; a failure is each job's failure, never an unhandled rejection.
    results.catch(() => {});
    const resultOf = (one: Job) => async () => {
      const result = (await results).get(one.id);
      if (!result) throw new Error(`no result for analysis job ${one.id}`);
      return result;
    };
    await Promise.all(
      others.map((other) => {
        const handler = Object.assign(() => settleAnalysis(resultOf(other)), { giveUp: giveUpRun });
        return runJob(queue, { [other.kind]: handler }, other, log);
      }),
    );
    return settleAnalysis(resultOf(job));
  }

  /** An analysis run whose job died: failed, with the reason. */
  async function giveUpRun(job: Job, error: unknown) {
    if (job.companyId) await giveUpAnalysis(database.db, job.companyId, job.payload, error);
  }

  /** A transcription run whose job died: failed, with the reason. */
  async function giveUpTranscriptionRun(job: Job, error: unknown) {
    if (job.companyId) {
      await giveUpTranscription(database.db, job.companyId, job.payload, error, engine?.name ?? null);
    }
  }

  const handlers: Record<string, JobHandler> = {
    async [VERIFY_UPLOAD_JOB](job) {
      const { companyId, uploadId } = uploadOf(job);
      await verifyUpload(
        {
          db: database.db,
          storage,
          prober,
          queue,
          transcribe: engine !== undefined,
          lateUploadGraceSeconds: config.uploads.expiryGraceSeconds,
        },
        companyId,
        uploadId,
      );
    },
    async [RECHECK_UPLOAD_JOB](job) {
      const { companyId, uploadId } = uploadOf(job);
      await recheckUpload({ db: database.db, storage, queue }, companyId, uploadId);
    },
    async [ANALYZE_CALL_JOB](job) {
      if (!job.companyId) throw new PermanentJobError('analysis job without a company');
      const companyId = job.companyId;
      if (isTranscriptRun(job.payload)) return analyzeTranscripts(job);
      const deps = {
        db: database.db,
        storage,
        decoder: findDecoder(config.ffmpegPath),
        maxSeconds: config.recordingMaxSeconds,
      };
      return settleAnalysis(() => runAnalysis(deps, companyId, job.payload, job));
    },
    async [TRANSCRIBE_CALL_JOB](job) {
      if (!job.companyId) throw new PermanentJobError('transcription job without a company');
      const deps = {
        db: database.db,
        storage,
        decoder: findDecoder(config.ffmpegPath),
        engine,
        maxSeconds: config.recordingMaxSeconds,
      };
      const result = await runTranscription(deps, job.companyId, job.payload);
      // The failure is recorded on the call; only transient errors (thrown) are retried.
      if (result.status === 'failed') throw new PermanentJobError(result.reason);
    },
    async [WEBHOOK_DELIVER_JOB](job) {
      const endpointId = job.payload.endpointId;
      if (!job.companyId || typeof endpointId !== 'string') {
        throw new PermanentJobError('webhook job without a company or an endpoint id');
      }
      await deliverEndpoint({ db: database.db, log, options: config.webhooks }, job.companyId, endpointId);
    },
    async [ERASE_OBJECTS_JOB](job) {
      const keys = job.payload.objectKeys;
      if (!Array.isArray(keys) || !keys.every((k) => typeof k === 'string')) {
        throw new PermanentJobError('erase job without object keys');
      }
      await deleteObjects(storage, keys);
    },
    async [RETENTION_SWEEP_JOB]() {
      await sweepRetention({
        db: database.db,
        storage,
        queue,
        handoffCache: services.handoffCache,
        lateUploadGraceSeconds: config.uploads.expiryGraceSeconds,
      });
    },
    async [SWEEP_UPLOADS_JOB]() {
      await sweepUploads(
        { db: database.db, storage, queue },
        { expiryGraceSeconds: config.uploads.expiryGraceSeconds },
      );
    },
  };
  (handlers[ANALYZE_CALL_JOB] as JobHandler).giveUp = giveUpRun;
  (handlers[TRANSCRIBE_CALL_JOB] as JobHandler).giveUp = giveUpTranscriptionRun;
  return handlers;
}

/**
 * Milliseconds between two rounds of the database's statistics upkeep: a look at pg_stat_user_tables (1-5 ms),
 * and ANALYZE only of the tables due, so a table filled by a burst is analysed within seconds.
 */
export const UPKEEP_EVERY_MS = 2000;

/** The periodic task that deletes dead jobs past EVENT_RETENTION_DAYS. */
export const PURGE_DEAD_JOBS_TASK = 'jobs.purge';

/**
 * Queues the upload sweep every UPLOAD_SWEEP_INTERVAL (with several processes, one sweep is queued),
 * purges events, finished webhook deliveries and dead jobs past retention hourly, and keeps the planner's
 * statistics up (`adapters/db/upkeep.ts`); the purges and the upkeep are idempotent, so each process may run them.
 */
export function periodicTasks(services: Services): PeriodicTask[] {
  const { database, queue, config } = services;
  return [
    {
      name: RETENTION_SWEEP_JOB,
      everyMs: RETENTION_SWEEP_EVERY_MS,
      async run() {
        if (await queue.enqueue(database.db, { kind: RETENTION_SWEEP_JOB, dedupeKey: RETENTION_SWEEP_JOB })) {
          queue.notify();
        }
      },
    },
    {
      name: SWEEP_UPLOADS_JOB,
      everyMs: config.uploads.sweepIntervalSeconds * 1000,
      async run() {
        if (await queue.enqueue(database.db, { kind: SWEEP_UPLOADS_JOB, dedupeKey: SWEEP_UPLOADS_JOB })) {
          queue.notify();
        }
      },
    },
    {
      name: PURGE_EVENTS_TASK,
      everyMs: 3600_000,
      async run() {
        await purgeExpiredEvents(database.db, config.events.retentionDays);
      },
    },
    {
      name: PURGE_DELIVERIES_TASK,
      everyMs: 3600_000,
      async run() {
        await purgeExpiredDeliveries(database.db, config.events.retentionDays);
      },
    },
    {
      name: PURGE_DEAD_JOBS_TASK,
      everyMs: 3600_000,
      async run() {
        await deleteInBatches((limit) => purgeDeadJobs(database.db, config.events.retentionDays, limit));
      },
    },
    {
      name: 'db.upkeep',
      everyMs: UPKEEP_EVERY_MS,
      async run() {
        await keepUpStatistics(database);
      },
    },
  ];
}
