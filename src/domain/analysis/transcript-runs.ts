/**
 * Transcripts' analysis jobs, many at a time. Each is cheap to compute (figures from the segments' times),
 * so what it cost was its statements: a claim, a read and a write per call/create with a transcript, as many
 * as the create's own. Here the jobs due together share one claim, one read and one write (results, their
 * analysis.ready events and the jobs' deletion), with each job's outcome what `runAnalysis` would give it.
 */
import type { Db } from '../../adapters/db/database.ts';
import {
  findTranscriptSubjects,
  finishTranscriptRuns,
  type TranscriptRunEnd,
} from '../../adapters/db/repositories/analyses.ts';
import type { Job, KindFilter } from '../../adapters/queue/queue.ts';
import {
  ANALYZE_CALL_JOB,
  type AnalyzePayload,
  analyzeTranscript,
  type RunResult,
  readyEvent,
} from './analysis.ts';

/** Transcript analysis jobs one run takes at most. */
export const TRANSCRIPT_BATCH = 50;

/** The claim of transcripts' analysis jobs only (a recording's run names its upload). */
export const TRANSCRIPT_JOBS: KindFilter = { only: [ANALYZE_CALL_JOB], payload: { uploadId: null } };

/** True when an analysis job's payload is a transcript's run. */
export function isTranscriptRun(payload: Record<string, unknown>): boolean {
  return payload.uploadId === null;
}

/**
 * Runs transcripts' analysis jobs together: one read of their calls, one write. Returns each job's result
 * by id (`jobCompleted` when the write deleted it); throws when the database does, for every job alike.
 */
export async function runTranscriptAnalyses(db: Db, jobs: readonly Job[]): Promise<Map<number, RunResult>> {
  const results = new Map<number, RunResult>();
  const runnable = jobs.flatMap((job) => {
    const { conversationUuid, runId } = job.payload as Partial<AnalyzePayload>;
    if (!job.companyId || typeof conversationUuid !== 'string' || typeof runId !== 'string') {
      results.set(job.id, { status: 'failed', reason: 'an analysis job without a company, a call or a run' });
      return [];
    }
    return [{ job, companyId: job.companyId, conversationUuid, runId }];
  });
  const subjects = await findTranscriptSubjects(
    db,
    runnable.map((r) => ({ jobId: r.job.id, companyId: r.companyId, conversationUuid: r.conversationUuid })),
  );
  const ends: TranscriptRunEnd[] = runnable.map((r) => {
    const subject = subjects.get(r.job.id);
    // Not the call's latest run (or no longer a transcript's): nothing to store, the job is done.
    if (subject?.runId !== r.runId) return { ...r, outcome: undefined, event: undefined, complete: true };
    const outcome = analyzeTranscript(subject.transcript);
    const ready = outcome.status === 'ready';
    return {
      ...r,
      outcome,
      event: ready ? readyEvent(subject.ref, null) : undefined,
      complete: ready,
    };
  });
  const { stored, completed } = await finishTranscriptRuns(db, ends);
  for (const end of ends) {
    const jobCompleted = completed.has(end.job.id);
    if (!end.outcome || !stored.has(end.job.id)) {
      results.set(end.job.id, { status: 'superseded', jobCompleted });
    } else if (end.outcome.status === 'failed') {
      results.set(end.job.id, { status: 'failed', reason: end.outcome.reason ?? '' });
    } else {
      results.set(end.job.id, { status: 'ready', jobCompleted });
    }
  }
  return results;
}
