/** Call analyses (decision 28), one row per call. Every query is filtered by company. */
import { and, desc, eq } from 'drizzle-orm';
import type { ClaimedJob } from '../../queue/queue.ts';
import { deleteFinishedJob } from '../../queue/queue.ts';
import type { Db } from '../database.ts';
import { prepared, runPrepared } from '../prepared.ts';
import { callAnalyses, uploads } from '../schema.ts';
import type { CallRef } from './events.ts';

/** A call_analyses row. */
export type CallAnalysis = typeof callAnalyses.$inferSelect;

/** What a run of the analysis ends with. */
export interface AnalysisOutcome {
  status: 'ready' | 'failed';
  reason: string | null;
  figures: unknown;
  method: string | null;
}

/** Starts a run: the call's analysis becomes pending with this run, replacing whatever was there. */
export async function startAnalysisRun(
  db: Db,
  companyId: string,
  conversationUuid: string,
  run: { runId: string; source: 'recording' | 'transcript'; uploadId: number | null },
): Promise<void> {
  const values = { status: 'pending' as const, reason: null, figures: null, method: null, ...run };
  await db
    .insert(callAnalyses)
    .values({ companyId, conversationUuid, ...values })
    .onConflictDoUpdate({
      target: [callAnalyses.companyId, callAnalyses.conversationUuid],
      set: { ...values, updatedAt: new Date() },
    });
}

const STORE_RUN = `update call_analyses set status = $4::text, reason = $5::text, figures = $6::json,
    method = $7::text, updated_at = now()
  where company_id = $1::uuid and conversation_uuid = $2::uuid and run_id = $3::uuid and status = 'pending'
  returning company_id`;
const FINISH_RUN = prepared(
  'analysis_finish',
  `with stored as (${STORE_RUN}) select count(*)::int as stored from stored`,
);
const FINISH_RUN_WITH_EVENT = prepared(
  'analysis_finish_with_event',
  `with stored as (${STORE_RUN}),
     written as (insert into events (company_id, type, data)
       select company_id, $8::text, $9::jsonb from stored)
   select count(*)::int as stored from stored`,
);
// The same, and the job deleted when its claim is still its own, unless it is to run again.
const FINISH_RUN_WITH_EVENT_AND_JOB = prepared(
  'analysis_finish_with_event_and_job',
  `with stored as (${STORE_RUN}),
     written as (insert into events (company_id, type, data)
       select company_id, $8::text, $9::jsonb from stored),
     done as (${deleteFinishedJob(10, 11)} and not rerun returning id)
   select (select count(*)::int from stored) as stored, (select count(*)::int from done) as completed`,
);

/**
 * Stores the outcome of a run, only if it is still the call's latest run and has not ended (a run ends
 * once: a job claimed again after its lease ran out wrote a second `analysis.ready`); false when not. With
 * `event`, the event is written by the same statement when the run is stored (its transactional outbox).
 */
export async function finishAnalysisRun(
  db: Db,
  companyId: string,
  conversationUuid: string,
  runId: string,
  outcome: AnalysisOutcome,
  event?: { type: string; data: Record<string, unknown> },
): Promise<boolean> {
  return (await finishAnalysisJob(db, companyId, conversationUuid, runId, outcome, event)).stored;
}

/**
 * finishAnalysisRun for the worker: given the claimed `job` and an `event`, the same statement also
 * completes the job (`completed`), so the worker need not.
 */
export async function finishAnalysisJob(
  db: Db,
  companyId: string,
  conversationUuid: string,
  runId: string,
  outcome: AnalysisOutcome,
  event?: { type: string; data: Record<string, unknown> },
  job?: ClaimedJob,
): Promise<{ stored: boolean; completed: boolean }> {
  const figures =
    outcome.figures === null || outcome.figures === undefined ? null : JSON.stringify(outcome.figures);
  const values = [
    companyId,
    conversationUuid,
    runId,
    outcome.status,
    outcome.reason,
    figures,
    outcome.method,
  ];
  // Without an event, no insert at all: the events table's statement trigger would notify for nothing.
  const withEvent = event ? [...values, event.type, JSON.stringify(event.data)] : [];
  const [row] = !event
    ? await runPrepared(db, FINISH_RUN, values)
    : job
      ? await runPrepared(db, FINISH_RUN_WITH_EVENT_AND_JOB, [...withEvent, job.id, job.attempts])
      : await runPrepared(db, FINISH_RUN_WITH_EVENT, withEvent);
  return { stored: Number(row?.stored ?? 0) > 0, completed: Number(row?.completed ?? 0) > 0 };
}

const FIND_SUBJECT = prepared(
  'analysis_subject',
  `select a.run_id, c.conversation_id, u.email, c.channel_map,
     case when a.upload_id is null then c.transcript end as transcript
   from call_analyses a
     join conversations c on c.company_id = a.company_id and c.id = a.conversation_uuid
     join users u on u.company_id = c.company_id and u.id = c.agent_user_id
   where a.company_id = $1::uuid and a.conversation_uuid = $2::uuid`,
);

/**
 * What an analysis job reads of its call, in one statement: the run it is at, the call's ids, its channel
 * map (a recording's roles) and, for a run from the transcript, the transcript (null for a recording's run).
 */
export interface AnalysisSubject {
  runId: string;
  ref: CallRef;
  channelMap: string[] | null;
  transcript: unknown;
}

/** The call's analysis run and what its job needs of the call, or undefined when the call has no analysis. */
export async function findAnalysisSubject(
  db: Db,
  companyId: string,
  conversationUuid: string,
): Promise<AnalysisSubject | undefined> {
  const [row] = await runPrepared(db, FIND_SUBJECT, [companyId, conversationUuid]);
  if (!row) return undefined;
  return {
    runId: String(row.run_id),
    ref: {
      call_id: conversationUuid,
      conversation_id: String(row.conversation_id),
      agent_email: String(row.email),
    },
    channelMap: (row.channel_map as string[] | null) ?? null,
    transcript: row.transcript,
  };
}

// The batch's keys drive the joins (LATERAL, kept apart by its LIMIT: one look-up by primary key per job):
// planned as for the 100 rows PostgreSQL assumes of jsonb_to_recordset, a join read all of conversations.
const FIND_TRANSCRIPT_SUBJECTS = prepared(
  'analysis_transcript_subjects',
  `select x.job_id, s.run_id, s.conversation_id, s.email, s.transcript
   from jsonb_to_recordset($1::jsonb) as x(job_id bigint, company_id uuid, conversation_uuid uuid)
     cross join lateral (
       select a.run_id, c.conversation_id, u.email, c.transcript
       from call_analyses a
         join conversations c on c.company_id = a.company_id and c.id = a.conversation_uuid
         join users u on u.company_id = c.company_id and u.id = c.agent_user_id
       where a.company_id = x.company_id and a.conversation_uuid = x.conversation_uuid
         and a.upload_id is null
       limit 1) s`,
);

/** A job's call, to read for a transcript's analysis. */
export interface TranscriptSubjectKey {
  jobId: number;
  companyId: string;
  conversationUuid: string;
}

/**
 * What the analysis jobs of several transcripts read of their calls, in one statement, by job id: the
 * run each call is at and its transcript (a call whose analysis is from a recording is left out).
 */
export async function findTranscriptSubjects(
  db: Db,
  keys: readonly TranscriptSubjectKey[],
): Promise<Map<number, AnalysisSubject>> {
  const rows = await runPrepared(db, FIND_TRANSCRIPT_SUBJECTS, [
    JSON.stringify(
      keys.map((k) => ({ job_id: k.jobId, company_id: k.companyId, conversation_uuid: k.conversationUuid })),
    ),
  ]);
  const keyOf = new Map(keys.map((k) => [k.jobId, k]));
  const byJob = new Map<number, AnalysisSubject>();
  for (const row of rows) {
    const key = keyOf.get(Number(row.job_id));
    if (!key) continue;
    byJob.set(key.jobId, {
      runId: String(row.run_id),
      ref: {
        call_id: key.conversationUuid,
        conversation_id: String(row.conversation_id),
        agent_email: String(row.email),
      },
      channelMap: null,
      transcript: row.transcript,
    });
  }
  return byJob;
}

/** The end of one transcript's analysis job: its outcome to store (none when superseded), and its event. */
export interface TranscriptRunEnd {
  job: ClaimedJob;
  companyId: string;
  conversationUuid: string;
  runId: string;
  outcome: AnalysisOutcome | undefined;
  event: { type: string; data: Record<string, unknown> } | undefined;
  /** Complete the job in the same statement (a failed run's job is kept, to be marked dead). */
  complete: boolean;
}

// The key arrays ($2-$4) beside the rows let the planner find each row by its index: estimated at 100
// rows, the recordset alone got hash joins that read all of call_analyses and jobs. json, not jsonb: each
// run's figures are stored as the text the service wrote (migration 0020).
const FINISH_TRANSCRIPT_RUNS = prepared(
  'analysis_finish_transcript_runs',
  `with x as (
     select * from json_to_recordset($1::json) as x(job_id bigint, attempts int, company_id uuid,
       conversation_uuid uuid, run_id uuid, store boolean, status text, reason text, figures json,
       method text, event_type text, event jsonb, complete boolean)),
   stored as (update call_analyses a set status = x.status, reason = x.reason, figures = x.figures,
       method = x.method, updated_at = now()
     from x
     where a.company_id = any($2::uuid[]) and a.conversation_uuid = any($3::uuid[])
       and x.store and a.company_id = x.company_id and a.conversation_uuid = x.conversation_uuid
       and a.run_id = x.run_id and a.status = 'pending'
     returning x.job_id, x.company_id, x.event_type, x.event),
   written as (insert into events (company_id, type, data)
     select company_id, event_type, event from stored where event_type is not null),
   done as (delete from jobs j using x
     where j.id = any($4::bigint[]) and x.complete and j.id = x.job_id and j.attempts = x.attempts and not j.rerun
     returning j.id)
   select (select coalesce(jsonb_agg(job_id), '[]') from stored) as stored,
     (select coalesce(jsonb_agg(id), '[]') from done) as completed`,
);

/**
 * Ends several transcripts' analysis jobs in one statement: each outcome is stored only while its run is
 * still the call's latest and pending (a run ends once, as STORE_RUN's: a job claimed again after its lease
 * ran out wrote a second `analysis.ready`), with its event (the transactional outbox), and each job to complete is deleted
 * while its claim is still its own. Returns the ids of the jobs whose outcome was stored, and of those
 * completed.
 */
export async function finishTranscriptRuns(
  db: Db,
  ends: readonly TranscriptRunEnd[],
): Promise<{ stored: Set<number>; completed: Set<number> }> {
  if (ends.length === 0) return { stored: new Set(), completed: new Set() };
  const rows = ends.map((end) => ({
    job_id: end.job.id,
    attempts: end.job.attempts,
    company_id: end.companyId,
    conversation_uuid: end.conversationUuid,
    run_id: end.runId,
    store: end.outcome !== undefined,
    status: end.outcome?.status ?? null,
    reason: end.outcome?.reason ?? null,
    figures: end.outcome?.figures ?? null,
    method: end.outcome?.method ?? null,
    event_type: end.event?.type ?? null,
    event: end.event?.data ?? null,
    complete: end.complete,
  }));
  const [row] = await runPrepared(db, FINISH_TRANSCRIPT_RUNS, [
    JSON.stringify(rows),
    [...new Set(ends.map((end) => end.companyId))],
    ends.map((end) => end.conversationUuid),
    ends.map((end) => end.job.id),
  ]);
  const ids = (value: unknown) =>
    new Set(((typeof value === 'string' ? JSON.parse(value) : value) as number[]).map(Number));
  return { stored: ids(row?.stored), completed: ids(row?.completed) };
}

/** The upload the call's latest analysis run is of: null for a transcript's, undefined when there is none. */
export async function findAnalysisUploadId(
  db: Db,
  companyId: string,
  conversationUuid: string,
): Promise<number | null | undefined> {
  const [row] = await db
    .select({ uploadId: callAnalyses.uploadId })
    .from(callAnalyses)
    .where(and(eq(callAnalyses.companyId, companyId), eq(callAnalyses.conversationUuid, conversationUuid)));
  return row?.uploadId;
}

/** The call's analysis row, or undefined. */
export async function findAnalysis(
  db: Db,
  companyId: string,
  conversationUuid: string,
): Promise<CallAnalysis | undefined> {
  const [row] = await db
    .select()
    .from(callAnalyses)
    .where(and(eq(callAnalyses.companyId, companyId), eq(callAnalyses.conversationUuid, conversationUuid)));
  return row;
}

/** The id of the call's latest ready upload, or undefined when it has none. */
export async function latestReadyUploadId(
  db: Db,
  companyId: string,
  conversationUuid: string,
): Promise<number | undefined> {
  const [row] = await db
    .select({ id: uploads.id })
    .from(uploads)
    .where(
      and(
        eq(uploads.companyId, companyId),
        eq(uploads.conversationUuid, conversationUuid),
        eq(uploads.status, 'ready'),
      ),
    )
    .orderBy(desc(uploads.updatedAt), desc(uploads.id))
    .limit(1);
  return row?.id;
}
