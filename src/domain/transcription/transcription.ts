/**
 * A call's transcription (decision 29): queued when an upload of a call without a client transcript becomes
 * ready (in the transaction that made it ready) or by POST /api/v1/calls/{id}/transcribe, run by the worker:
 * each channel is decoded to 16 kHz, transcribed on its own and takes its channel's role; the merged
 * segments become the call's transcript, in one conditional write that never overwrites a client's.
 */
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Db } from '../../adapters/db/database.ts';
import { latestReadyUploadId } from '../../adapters/db/repositories/analyses.ts';
import { findConversationByUuid } from '../../adapters/db/repositories/conversations.ts';
import {
  type CallTranscription,
  callHasClientTranscript,
  findTranscription,
  finishTranscriptionRun,
  startTranscriptionRun,
  storeTranscribedTranscript,
} from '../../adapters/db/repositories/transcriptions.ts';
import { findUploadWithConversation } from '../../adapters/db/repositories/uploads.ts';
import {
  type Decoder,
  decodePcm,
  RecordingTooLongError,
  UndecodableError,
} from '../../adapters/decode/ffmpeg.ts';
import type { JobQueue } from '../../adapters/queue/queue.ts';
import type { Storage } from '../../adapters/storage/storage.ts';
import { WavWriter } from '../../adapters/transcribe/wav.ts';
import { createDetector, FRAME_MS, SpeechTracker } from '../../adapters/vad/detector.ts';
import { makeWorkDir, requireFreeSpace } from '../../adapters/work-dir.ts';
import type { Principal } from '../access/principal.ts';
import { channelRoles, SERVICE_DETECTOR } from '../analysis/analysis.ts';
import type { SpeechRole } from '../analysis/figures.ts';
import { findVisibleCall } from '../calls/visibility.ts';
import { ConflictError } from '../errors.ts';
import { callRef, recordEvent } from '../events/record.ts';
import { listenableAudio, type MediaFindings } from '../uploads/uploads.ts';
import {
  type ChannelAudio,
  mergeChannels,
  TRANSCRIPTION_SAMPLE_RATE,
  type TranscriptionEngine,
  TranscriptionError,
} from './engine.ts';

/** The job kind of a transcription run. */
export const TRANSCRIBE_CALL_JOB = 'call.transcribe';

const CLIENT_WINS = 'the call has a transcript from the client, which is never overwritten';

/** A call's `transcription` as GET /api/v1/calls/{id} shows it. */
export interface CallTranscriptionView {
  status: 'pending' | 'ready' | 'failed';
  reason: string | null;
  /** The engine that made (or failed to make) it. */
  engine: string | null;
  upload_id: number | null;
  updated_at: string;
}

interface TranscribePayload {
  conversationUuid: string;
  runId: string;
  uploadId: number;
}

/**
 * Queues the transcription of a ready recording (call inside the transaction that made it ready), unless
 * the call has a client's transcript. Returns whether a run was queued.
 */
export async function queueTranscription(
  tx: Db,
  queue: JobQueue,
  companyId: string,
  conversationUuid: string,
  uploadId: number,
): Promise<boolean> {
  if (await callHasClientTranscript(tx, companyId, conversationUuid)) return false;
  const runId = randomUUID();
  await startTranscriptionRun(tx, companyId, conversationUuid, { runId, uploadId });
  const payload: TranscribePayload = { conversationUuid, runId, uploadId };
  await queue.enqueue(tx, { kind: TRANSCRIBE_CALL_JOB, companyId, payload: { ...payload } });
  return true;
}

/**
 * POST /api/v1/calls/{id}/transcribe: queues the call's latest ready recording again. ConflictError when no
 * engine is configured, when the client sent the transcript, or when there is no ready recording.
 */
export async function requestTranscription(
  deps: { db: Db; queue: JobQueue; engineConfigured: boolean },
  principal: Principal,
  id: string,
): Promise<{ status: 'pending'; upload_id: number }> {
  const call = await findVisibleCall(deps.db, principal, id);
  if (!deps.engineConfigured) {
    throw new ConflictError('no transcription engine is configured on this server (TRANSCRIBER=none)');
  }
  const companyId = principal.companyId;
  const uploadId = await deps.db.transaction(async (tx) => {
    if (await callHasClientTranscript(tx, companyId, call.id)) {
      throw new ConflictError(CLIENT_WINS);
    }
    const latest = await latestReadyUploadId(tx, companyId, call.id);
    if (latest === undefined) throw new ConflictError('the call has no ready recording to transcribe');
    await queueTranscription(tx, deps.queue, companyId, call.id, latest);
    return latest;
  });
  deps.queue.notify();
  return { status: 'pending', upload_id: uploadId };
}

/** What running a transcription needs. */
export interface TranscriptionDeps {
  db: Db;
  storage: Storage;
  decoder: Decoder | undefined;
  /** Undefined with TRANSCRIBER=none: a queued run then fails saying so. */
  engine: TranscriptionEngine | undefined;
  /** RECORDING_MAX_SECONDS: a longer recording fails with a reason (no limit when absent). */
  maxSeconds?: number;
}

/** How a run ended. Transient failures are thrown instead, so that the job is retried. */
export type TranscriptionResult = { status: 'ready' | 'superseded' } | { status: 'failed'; reason: string };

/** Decodes the recording into one 16 kHz WAV per channel in `dir`, and finds the speech in each. */
export async function decodeChannels(
  decoder: Decoder,
  reader: Parameters<typeof decodePcm>[1],
  container: string | null,
  channels: 1 | 2,
  dir: string,
  maxSeconds?: number,
): Promise<ChannelAudio[]> {
  const frameSamples = (TRANSCRIPTION_SAMPLE_RATE * FRAME_MS) / 1000;
  const lanes = await Promise.all(
    Array.from({ length: channels }, async (_, c) => ({
      writer: new WavWriter(join(dir, `channel-${c}.wav`), TRANSCRIPTION_SAMPLE_RATE),
      detector: await createDetector(SERVICE_DETECTOR, TRANSCRIPTION_SAMPLE_RATE),
      tracker: new SpeechTracker(FRAME_MS / 1000),
    })),
  );
  let sampleFrames = 0;
  try {
    const pcm = decodePcm(decoder, reader, {
      channels,
      sampleRate: TRANSCRIPTION_SAMPLE_RATE,
      container,
      frameSamples,
      ...(maxSeconds === undefined ? {} : { maxSeconds }),
    });
    for await (const chunk of pcm) {
      const frames = chunk.length / channels;
      sampleFrames += frames;
      await Promise.all(
        lanes.map(async (lane, c) => {
          const mono = new Int16Array(frames);
          for (let i = 0; i < frames; i++) mono[i] = chunk[i * channels + c] as number;
          for (let at = 0; at + frameSamples <= frames; at += frameSamples) {
            lane.tracker.push(lane.detector.isSpeech(mono.subarray(at, at + frameSamples)));
          }
          await lane.writer.write(mono);
        }),
      );
    }
  } finally {
    for (const lane of lanes) lane.detector.close();
    await Promise.all(lanes.map((lane) => lane.writer.close()));
  }
  return lanes.map((lane) => ({
    wavPath: lane.writer.path,
    durationS: sampleFrames / TRANSCRIPTION_SAMPLE_RATE,
    speech: lane.tracker.finish(),
  }));
}

async function transcribeUpload(
  deps: TranscriptionDeps & { engine: TranscriptionEngine; decoder: Decoder },
  companyId: string,
  uploadId: number,
): Promise<{ segments: ReturnType<typeof mergeChannels> } | { failed: string }> {
  const upload = await findUploadWithConversation(deps.db, companyId, uploadId);
  if (upload?.status !== 'ready') return { failed: 'the recording is no longer ready' };
  const conversation = await findConversationByUuid(deps.db, companyId, upload.conversationUuid);
  const recording = listenableAudio(upload.probe as MediaFindings | null);
  if ('problem' in recording) return { failed: recording.problem };
  const { probe, channels: sourceChannels } = recording;
  // Channels are parties only when the call says so; otherwise the audio is one speaker's mix.
  const byChannel = upload.speakerSeparation === 'channels' && sourceChannels >= 2;
  const roles: SpeechRole[] = byChannel ? channelRoles(conversation?.channelMap ?? null) : ['unknown'];
  const reader = await deps.storage.open(upload.objectKey);
  if (!reader) return { failed: 'the recording is missing from storage' };
  const dir = await makeWorkDir('transcribe');
  try {
    const channels = byChannel ? 2 : 1;
    // The channels are written whole before the engine hears them: room is made sure of first, for the
    // header's duration (at most the limit; the limit when the header says none), as a full disk there
    // is the data directory's too, often. A header that understates is caught by the write (ENOSPC).
    const seconds = Math.min(
      probe.duration_seconds ?? deps.maxSeconds ?? 0,
      deps.maxSeconds ?? Number.POSITIVE_INFINITY,
    );
    await requireFreeSpace(dir, seconds * TRANSCRIPTION_SAMPLE_RATE * 2 * channels, 'the decoded channels');
    const audio = await decodeChannels(deps.decoder, reader, probe.container, channels, dir, deps.maxSeconds);
    // A channel that fails fails the run, so the other channel's work is stopped rather than finished for
    // nothing (a channel of an hour's call is 15-20 CPU-minutes of pocketsphinx).
    const stop = new AbortController();
    const perChannel = await Promise.all(
      // A channel in which the detector heard nothing is not sent: engines invent words in silence.
      audio.map((a) =>
        a.speech.length === 0
          ? Promise.resolve([])
          : deps.engine.transcribe(a, stop.signal).catch((error: unknown) => {
              stop.abort();
              throw error;
            }),
      ),
    );
    return {
      segments: mergeChannels(perChannel.map((segments, c) => ({ role: roles[c] ?? 'unknown', segments }))),
    };
  } catch (error) {
    if (error instanceof UndecodableError || error instanceof RecordingTooLongError)
      return { failed: error.message };
    if (error instanceof TranscriptionError && !error.transient) return { failed: error.message };
    throw error;
  } finally {
    await reader.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs one transcription job. Transient errors (engine, storage, database) throw, so it is retried. */
export async function runTranscription(
  deps: TranscriptionDeps,
  companyId: string,
  payload: Record<string, unknown>,
): Promise<TranscriptionResult> {
  const { conversationUuid, runId, uploadId } = payload as Partial<TranscribePayload>;
  if (typeof conversationUuid !== 'string' || typeof runId !== 'string' || typeof uploadId !== 'number') {
    return { status: 'failed', reason: 'a transcription job without a call, a run or an upload' };
  }
  const row = await findTranscription(deps.db, companyId, conversationUuid);
  // A run ends once: a job claimed again after its run was stored (its process stopped before the job was
  // completed, its lease ran out) paid the engine again and wrote a second `transcript.ready`.
  if (row?.runId !== runId || row.status !== 'pending') return { status: 'superseded' };
  const engine = deps.engine;
  const finish = async (status: 'ready' | 'failed', reason: string | null) =>
    finishTranscriptionRun(deps.db, companyId, conversationUuid, runId, {
      status,
      reason,
      engine: engine?.name ?? null,
    });
  const fail = async (reason: string): Promise<TranscriptionResult> =>
    (await finish('failed', reason)) ? { status: 'failed', reason } : { status: 'superseded' };
  if (!engine) return fail('no transcription engine is configured on this server (TRANSCRIBER=none)');
  if (!deps.decoder) return fail('no audio decoder is available on the server (ffmpeg)');
  if (await callHasClientTranscript(deps.db, companyId, conversationUuid)) return fail(CLIENT_WINS);
  const result = await transcribeUpload({ ...deps, engine, decoder: deps.decoder }, companyId, uploadId);
  if ('failed' in result) return fail(result.failed);
  // The transcript, the run's result and the event commit together, or none of them does.
  const stored = await deps.db.transaction(async (tx) => {
    // Locked: of two runs of one job at once, the second finds the first's outcome.
    const current = await findTranscription(tx, companyId, conversationUuid, true);
    if (current?.runId !== runId || current.status !== 'pending') return 'superseded';
    if (!(await storeTranscribedTranscript(tx, companyId, conversationUuid, result.segments))) {
      await finishTranscriptionRun(tx, companyId, conversationUuid, runId, {
        status: 'failed',
        reason: CLIENT_WINS,
        engine: engine.name,
      });
      return 'client';
    }
    await finishTranscriptionRun(tx, companyId, conversationUuid, runId, {
      status: 'ready',
      reason: null,
      engine: engine.name,
    });
    const ref = await callRef(tx, companyId, conversationUuid);
    await recordEvent(tx, companyId, 'transcript.ready', {
      ...ref,
      upload_id: uploadId,
      transcript_source: 'transcription',
      segments: result.segments.length,
    });
    return 'ready';
  });
  if (stored === 'superseded') return { status: 'superseded' };
  return stored === 'client' ? { status: 'failed', reason: CLIENT_WINS } : { status: 'ready' };
}

/** Marks a run failed after its last attempt, so that the call does not stay pending for ever. */
export async function giveUpTranscription(
  db: Db,
  companyId: string,
  payload: Record<string, unknown>,
  error: unknown,
  engine: string | null,
): Promise<void> {
  const { conversationUuid, runId } = payload as Partial<TranscribePayload>;
  if (typeof conversationUuid !== 'string' || typeof runId !== 'string') return;
  const reason = `the transcription failed: ${error instanceof Error ? error.message : String(error)}`;
  await finishTranscriptionRun(db, companyId, conversationUuid, runId, {
    status: 'failed',
    reason: reason.slice(0, 500),
    engine,
  });
}

/** The call's `transcription` from its row, or null when none was ever queued (no row). */
export function transcriptionView(
  row: Pick<CallTranscription, 'status' | 'reason' | 'engine' | 'uploadId' | 'updatedAt'> | null,
): CallTranscriptionView | null {
  if (!row) return null;
  return {
    status: row.status,
    reason: row.reason,
    engine: row.engine,
    upload_id: row.uploadId,
    updated_at: row.updatedAt.toISOString(),
  };
}
