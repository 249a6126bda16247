/**
 * A call's analysis (decision 28): queued when an upload of the call becomes ready (from the recording)
 * or when a transcript is sent for a call with no ready recording (from the transcript), run by the worker,
 * and shown by GET one call as `analysisText` of its row (its stored figures written as they are;
 * `analysisOf` reads one parsed). Each queueing starts a new run; only the latest run's result is stored.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../adapters/db/database.ts';
import {
  type AnalysisOutcome,
  type CallAnalysis,
  findAnalysis,
  findAnalysisSubject,
  findAnalysisUploadId,
  finishAnalysisJob,
  finishAnalysisRun,
  latestReadyUploadId,
  startAnalysisRun,
} from '../../adapters/db/repositories/analyses.ts';
import type { CallDetailRow } from '../../adapters/db/repositories/call-reads.ts';
import type { CallRef } from '../../adapters/db/repositories/events.ts';
import { callHasClientTranscript } from '../../adapters/db/repositories/transcriptions.ts';
import { findUploadWithConversation } from '../../adapters/db/repositories/uploads.ts';
import { type Decoder, RecordingTooLongError, UndecodableError } from '../../adapters/decode/ffmpeg.ts';
import type { ClaimedJob, JobQueue } from '../../adapters/queue/queue.ts';
import type { Storage } from '../../adapters/storage/storage.ts';
import type { DetectorKind } from '../../adapters/vad/detector.ts';
import type { SegmentInput } from '../calls/transcript.ts';
import type { EventData, EventType } from '../events/types.ts';
import { type JsonText, jsonObjectText, jsonText } from '../json-text.ts';
import { listenableAudio, type MediaFindings } from '../uploads/uploads.ts';
import { type AnalysisFigures, computeFigures, type SpeechRole, type Track } from './figures.ts';
import { findSpeech } from './recording.ts';

/** The job kind of an analysis run. */
export const ANALYZE_CALL_JOB = 'call.analyze';

/** The detector the service uses: chosen by measurement (docs/analysis.md). */
export const SERVICE_DETECTOR: DetectorKind = 'energy';

/** A call's `analysis` as GET /api/v1/calls/{id} shows it (decision 28). */
export type CallAnalysisView = {
  status: 'pending' | 'ready' | 'failed';
  reason: string | null;
  source: 'recording' | 'transcript';
} & { [K in keyof AnalysisFigures]: AnalysisFigures[K] | null };

/** The payload of an analysis job. */
export interface AnalyzePayload {
  conversationUuid: string;
  runId: string;
  uploadId: number | null;
}

async function queueRun(
  tx: Db,
  queue: JobQueue,
  companyId: string,
  conversationUuid: string,
  uploadId: number | null,
): Promise<void> {
  const runId = randomUUID();
  const source = uploadId === null ? 'transcript' : 'recording';
  await startAnalysisRun(tx, companyId, conversationUuid, { runId, source, uploadId });
  const payload: AnalyzePayload = { conversationUuid, runId, uploadId };
  await queue.enqueue(tx, { kind: ANALYZE_CALL_JOB, companyId, payload: { ...payload } });
}

/** Queues the analysis of a recording that just became ready (call inside the transaction that made it so). */
export function queueRecordingAnalysis(
  tx: Db,
  queue: JobQueue,
  companyId: string,
  conversationUuid: string,
  uploadId: number,
): Promise<void> {
  return queueRun(tx, queue, companyId, conversationUuid, uploadId);
}

/**
 * Keeps the call's analysis made from what it has (decision 28) when new bytes of `uploadId` are rejected
 * (call inside the transaction that rejects them): if the analysis was made from that upload, a new run is
 * queued from the call's latest ready recording, else from its client's transcript, else from the rejected
 * upload, a run that fails saying the recording is no longer ready. A transcript the engine made is not
 * used: it is the text of the rejected recording. Returns whether a run was queued.
 */
export async function queueAnalysisAfterRejection(
  tx: Db,
  queue: JobQueue,
  companyId: string,
  conversationUuid: string,
  uploadId: number,
): Promise<boolean> {
  if ((await findAnalysisUploadId(tx, companyId, conversationUuid)) !== uploadId) return false;
  const latest = await latestReadyUploadId(tx, companyId, conversationUuid);
  const source =
    latest ?? ((await callHasClientTranscript(tx, companyId, conversationUuid)) ? null : uploadId);
  await queueRun(tx, queue, companyId, conversationUuid, source);
  return true;
}

/**
 * The analysis run of a transcript sent with call/create: a run when every segment has its times, queued
 * by the create's statement (`cqs_create_call`, migration 0013) in the same way as `queueRun`, with the
 * payload `{conversationUuid, runId, uploadId: null}`, unless the call has a ready recording: the
 * recording wins.
 */
export function transcriptAnalysisRun(
  segments: readonly SegmentInput[],
): { runId: string; jobKind: string } | undefined {
  if (!segments.every(hasTimes)) return undefined;
  return { runId: randomUUID(), jobKind: ANALYZE_CALL_JOB };
}

function hasTimes(s: Partial<SegmentInput>): boolean {
  return typeof s.start === 'number' && typeof s.stop === 'number' && s.stop >= s.start;
}

/** What running an analysis needs. */
export interface AnalysisDeps {
  db: Db;
  storage: Storage;
  /** Undefined when no ffmpeg is available: recordings then fail with a reason saying so. */
  decoder: Decoder | undefined;
  /** RECORDING_MAX_SECONDS: a longer recording fails with a reason (no limit when absent). */
  maxSeconds?: number;
}

/** How a run ended: stored, superseded by a newer run, or failed with a reason retrying cannot fix. */
export type RunResult = ({ status: 'ready' | 'superseded' } | { status: 'failed'; reason: string }) & {
  /** True when the statement that stored the result also completed the job it was given. */
  jobCompleted?: boolean;
};

/** Roles of the two channels of a recording: from the channel map, or both unknown when it is null. */
export function channelRoles(channelMap: readonly string[] | null): [SpeechRole, SpeechRole] {
  const [left, right] = channelMap ?? [];
  if (
    (left === 'agent' || left === 'customer') &&
    (right === 'agent' || right === 'customer') &&
    left !== right
  ) {
    return [left, right];
  }
  // No rule tells the agent's channel from the customer's better than chance (docs/analysis.md).
  return ['unknown', 'unknown'];
}

async function analyzeRecording(
  deps: AnalysisDeps,
  companyId: string,
  uploadId: number,
  channelMap: readonly string[] | null,
): Promise<AnalysisOutcome> {
  const failed = (reason: string): AnalysisOutcome => ({
    status: 'failed',
    reason,
    figures: null,
    method: null,
  });
  const upload = await findUploadWithConversation(deps.db, companyId, uploadId);
  if (upload?.status !== 'ready') return failed('the recording is no longer ready');
  if (!deps.decoder) return failed('no audio decoder is available on the server (ffmpeg)');
  const recording = listenableAudio(upload.probe as MediaFindings | null);
  if ('problem' in recording) return failed(recording.problem);
  const { probe, channels: sourceChannels } = recording;
  // Channels are parties only when the call says so; otherwise the audio is one mix (decision 28: mono).
  const byChannel = upload.speakerSeparation === 'channels' && sourceChannels >= 2;
  const reader = await deps.storage.open(upload.objectKey);
  if (!reader) return failed('the recording is missing from storage');
  try {
    const found = await findSpeech(deps.decoder, reader, {
      channels: byChannel ? 2 : 1,
      container: probe.container,
      detector: SERVICE_DETECTOR,
      ...(deps.maxSeconds === undefined ? {} : { maxSeconds: deps.maxSeconds }),
    });
    const roles: SpeechRole[] = byChannel ? channelRoles(channelMap) : ['unknown'];
    const tracks: Track[] = found.channels.map((intervals, c) => ({
      role: roles[c] ?? 'unknown',
      intervals,
    }));
    return {
      status: 'ready',
      reason: null,
      figures: computeFigures(found.durationS, tracks),
      method: `${SERVICE_DETECTOR} detector, ${deps.decoder.source} ffmpeg`,
    };
  } catch (error) {
    if (error instanceof UndecodableError || error instanceof RecordingTooLongError)
      return failed(error.message);
    throw error;
  } finally {
    await reader.close();
  }
}

/** The analysis of a transcript: its figures from the segments' times and roles (a pure computation). */
export function analyzeTranscript(transcript: unknown): AnalysisOutcome {
  const segments = (Array.isArray(transcript) ? transcript : []) as Partial<SegmentInput>[];
  if (!segments.every(hasTimes)) {
    return { status: 'failed', reason: 'a transcript segment has no times', figures: null, method: null };
  }
  const track = (role: 'agent' | 'customer'): Track => ({
    role,
    intervals: segments
      .filter((s) => s.role === role)
      .map((s) => ({ start: s.start as number, stop: s.stop as number })),
  });
  const duration = Math.max(0, ...segments.map((s) => s.stop as number));
  return {
    status: 'ready',
    reason: null,
    figures: computeFigures(duration, [track('agent'), track('customer')]),
    method: 'transcript segments',
  };
}

/** The analysis.ready event of a stored run (decision 27): the call, and the recording it was made from. */
export function readyEvent(ref: CallRef, uploadId: number | null): { type: EventType; data: EventData } {
  return {
    type: 'analysis.ready',
    data: {
      ...ref,
      status: 'ready',
      source: uploadId === null ? 'transcript' : 'recording',
      ...(uploadId === null ? {} : { upload_id: uploadId }),
    },
  };
}

/**
 * Runs one analysis job. Transient errors (storage, database) throw, so the job is retried. Given its
 * claimed `job`, a ready result completes the job in the statement that stores it.
 */
export async function runAnalysis(
  deps: AnalysisDeps,
  companyId: string,
  payload: Record<string, unknown>,
  job?: ClaimedJob,
): Promise<RunResult> {
  const { conversationUuid, runId, uploadId } = payload as Partial<AnalyzePayload>;
  if (typeof conversationUuid !== 'string' || typeof runId !== 'string') {
    return { status: 'failed', reason: 'an analysis job without a call or a run' };
  }
  // One read: the run the call is at, its ids for the event, its channel map and (from a transcript) the transcript.
  const subject = await findAnalysisSubject(deps.db, companyId, conversationUuid);
  if (subject?.runId !== runId) return { status: 'superseded' };
  const outcome =
    typeof uploadId === 'number'
      ? await analyzeRecording(deps, companyId, uploadId, subject.channelMap)
      : analyzeTranscript(subject.transcript);
  // A ready analysis is an event (analysis.ready), written by the statement that stores the result.
  const event =
    outcome.status === 'ready'
      ? readyEvent(subject.ref, typeof uploadId === 'number' ? uploadId : null)
      : undefined;
  const { stored, completed } = await finishAnalysisJob(
    deps.db,
    companyId,
    conversationUuid,
    runId,
    outcome,
    event,
    job,
  );
  if (!stored) return { status: 'superseded', jobCompleted: completed };
  return outcome.status === 'ready'
    ? { status: 'ready', jobCompleted: completed }
    : { status: 'failed', reason: outcome.reason ?? '' };
}

/** Marks a run failed after its last attempt, so that the call does not stay pending for ever. */
export async function giveUpAnalysis(
  db: Db,
  companyId: string,
  payload: Record<string, unknown>,
  error: unknown,
): Promise<void> {
  const { conversationUuid, runId } = payload as Partial<AnalyzePayload>;
  if (typeof conversationUuid !== 'string' || typeof runId !== 'string') return;
  const reason = `the analysis failed: ${error instanceof Error ? error.message : String(error)}`.slice(
    0,
    500,
  );
  await finishAnalysisRun(db, companyId, conversationUuid, runId, {
    status: 'failed',
    reason,
    figures: null,
    method: null,
  });
}

const EMPTY_FIGURES: { [K in keyof AnalysisFigures]: null } = {
  duration_s: null,
  talk_s: null,
  silence_s: null,
  overtalk_s: null,
  talk_ratio_agent: null,
  longest_monologue_s: null,
  interruptions: null,
  speech: null,
};

/** The call's `analysis` (decision 28), or null when none was ever queued. */
export async function analysisOf(
  db: Db,
  companyId: string,
  callUuid: string,
): Promise<CallAnalysisView | null> {
  return analysisView((await findAnalysis(db, companyId, callUuid)) ?? null);
}

/**
 * The call's `analysis` (decision 28) as JSON text, its figures written as stored (a 1,000-segment call's
 * are 51 kB, which parsed and serialized again were a third of what a call read allocated), or null when
 * none was ever queued (no row).
 */
export function analysisText(row: CallDetailRow['analysis']): JsonText<CallAnalysisView> | null {
  if (!row) return null;
  const head = { status: row.status, reason: row.reason, source: row.source };
  if (row.status !== 'ready' || row.figuresText === null) {
    return jsonText([JSON.stringify({ ...head, ...EMPTY_FIGURES })]);
  }
  return jsonObjectText(head, row.figuresText);
}

/** The call's `analysis` (decision 28) from its row, or null when none was ever queued (no row). */
export function analysisView(
  row: Pick<CallAnalysis, 'status' | 'reason' | 'source' | 'figures'> | null,
): CallAnalysisView | null {
  if (!row) return null;
  const figures = row.status === 'ready' ? (row.figures as AnalysisFigures) : EMPTY_FIGURES;
  return { status: row.status, reason: row.reason, source: row.source, ...figures };
}
