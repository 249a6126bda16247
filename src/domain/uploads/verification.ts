/**
 * Verification of an uploaded object: the container is read from the bytes and the streams probed, then
 * the upload becomes `ready`, or `rejected` with a reason when it is not media, is not the video container
 * its type declares, holds no audio on the audio path, is 250 MB or more (the object is then deleted:
 * S3 cannot refuse it up front), or has fewer than two channels for a call separated by channels.
 */
import type { Db } from '../../adapters/db/database.ts';
import { lockCallForRuns } from '../../adapters/db/repositories/conversations.ts';
import {
  findUploadWithConversation,
  recordVerdict,
  type UploadVerdict,
  type UploadWithConversation,
} from '../../adapters/db/repositories/uploads.ts';
import { type MediaProber, ProbeFailedError, type ProbeResult } from '../../adapters/probe/mediainfo.ts';
import type { JobQueue } from '../../adapters/queue/queue.ts';
import type { ObjectReader, Storage } from '../../adapters/storage/storage.ts';
import { queueAnalysisAfterRejection, queueRecordingAnalysis } from '../analysis/analysis.ts';
import { callRef, recordEvent } from '../events/record.ts';
import { queueTranscription } from '../transcription/transcription.ts';
import { mediaTypeOf, videoContainerFor } from './media-types.ts';
import { queueRecheck } from './recheck.ts';
import { MAX_UPLOAD_BYTES, type MediaFindings } from './uploads.ts';

/** What verification needs. */
export interface VerificationDeps {
  db: Db;
  storage: Storage;
  prober: MediaProber;
  /** Where the analysis of a ready recording is queued. */
  queue: JobQueue;
  /** Whether an engine is configured: a ready recording of a call without a client transcript is then transcribed. */
  transcribe?: boolean;
  /** UPLOAD_EXPIRY_GRACE: how long after its URL expires a PUT begun before may still arrive. */
  lateUploadGraceSeconds: number;
}

/** A verdict on bytes, before it is known which object's bytes they were (judgeProbe's). */
export type Judgement = Omit<UploadVerdict, 'objectEtag'>;

/** The findings shown to clients, from what the probe found. */
export function findingsOf(probe: ProbeResult): MediaFindings {
  const audio = probe.audio[0];
  const video = probe.video[0];
  return {
    container: probe.container ?? null,
    format: probe.format ?? null,
    duration_seconds: probe.durationSeconds ?? null,
    has_audio: probe.audio.length > 0,
    has_video: probe.video.length > 0,
    audio_streams: probe.audio.length,
    video_streams: probe.video.length,
    audio_channels: audio?.channels ?? null,
    audio_codec: audio?.codec ?? null,
    audio_sample_rate: audio?.sampleRate ?? null,
    video_codec: video?.codec ?? null,
    video_width: video?.width ?? null,
    video_height: video?.height ?? null,
  };
}

/** The rules of the module comment, applied to what the probe found. Pure: the tests call it directly. */
export function judgeProbe(
  upload: Pick<UploadWithConversation, 'contentType' | 'mediaKind' | 'speakerSeparation'>,
  size: number,
  probe: ProbeResult,
): Judgement {
  const media = findingsOf(probe);
  const reject = (reason: string, withFindings = true): Judgement => ({
    status: 'rejected',
    reason,
    size,
    probe: withFindings ? media : null,
  });
  if (probe.audio.length === 0 && probe.video.length === 0) {
    const what = probe.format ? ` (${probe.format})` : '';
    return reject(`not a media file${what}: no audio or video stream found`, false);
  }
  const type = mediaTypeOf(upload.contentType);
  const expected = videoContainerFor(type)?.probedAs;
  if (upload.mediaKind === 'video' && expected && probe.container !== expected) {
    return reject(
      `declared ${type} (${expected}) but the file is ${probe.container ?? 'an unknown container'}`,
    );
  }
  if (upload.mediaKind === 'audio' && probe.audio.length === 0) {
    return reject('uploaded as audio but the file has no audio stream');
  }
  const channels = media.audio_channels ?? 0;
  if (upload.speakerSeparation === 'channels' && channels < 2) {
    return reject(
      `speaker separation is "channels" but the audio has ${channels} channel${channels === 1 ? '' : 's'}; two are needed`,
    );
  }
  return { status: 'ready', reason: null, size, probe: media };
}

/** Reads and judges the object of an upload, with its ETag; deletes it when it is too large. */
async function judgeObject(deps: VerificationDeps, upload: UploadWithConversation): Promise<UploadVerdict> {
  const reader = await deps.storage.open(upload.objectKey);
  if (!reader) {
    return {
      status: 'rejected',
      reason: 'the uploaded object is missing from storage',
      size: null,
      probe: null,
      objectEtag: null,
    };
  }
  try {
    return { ...(await judgeReader(deps, upload, reader)), objectEtag: reader.etag ?? null };
  } finally {
    await reader.close();
  }
}

async function judgeReader(
  deps: VerificationDeps,
  upload: UploadWithConversation,
  reader: ObjectReader,
): Promise<Judgement> {
  if (reader.size >= MAX_UPLOAD_BYTES) {
    // Deleted before the verdict is recorded: if deleting fails, the job is retried and tries again.
    await deps.storage.delete(upload.objectKey);
    return {
      status: 'rejected',
      reason: `the file is ${reader.size} bytes; uploads must be under ${MAX_UPLOAD_BYTES} bytes`,
      size: reader.size,
      probe: null,
    };
  }
  try {
    return judgeProbe(upload, reader.size, await deps.prober.probe(reader));
  } catch (error) {
    if (!(error instanceof ProbeFailedError)) throw error;
    return {
      status: 'rejected',
      reason: 'not a media file: it could not be parsed',
      size: reader.size,
      probe: null,
    };
  }
}

/**
 * Verifies an upload that is `uploaded`; anything else is left alone (already verified, or gone). If the
 * client uploads again while this runs, the verdict is not recorded and the newer bytes are verified.
 * Returns the status recorded, or undefined when there was nothing to do.
 */
export async function verifyUpload(
  deps: VerificationDeps,
  companyId: string,
  uploadId: number,
): Promise<'ready' | 'rejected' | undefined> {
  for (let round = 0; round < 3; round++) {
    const upload = await findUploadWithConversation(deps.db, companyId, uploadId);
    if (upload?.status !== 'uploaded') return undefined;
    const verdict = await judgeObject(deps, upload);
    // A ready recording is analysed: the verdict and the analysis job commit together.
    let rerun = false;
    const recorded = await deps.db.transaction(async (tx) => {
      // First, so that a verdict and a change of speaker or another verdict of the same call, which each
      // choose what the call's runs are of, take turns: each then sees what the other committed. Without it,
      // the later one chose from what it saw before the other committed (a stale "latest ready") and
      // overwrote the other's run.
      await lockCallForRuns(tx, companyId, upload.conversationUuid);
      if (!(await recordVerdict(tx, companyId, uploadId, upload.updatedAt, verdict))) return false;
      // Bytes whose storage takes PUTs unseen (S3, where an ETag is known) are looked at again once no URL
      // can bring others.
      if (verdict.objectEtag !== null) {
        await queueRecheck(
          tx,
          deps.queue,
          companyId,
          uploadId,
          upload.expiresAt,
          deps.lateUploadGraceSeconds,
        );
      }
      if (verdict.status === 'ready') {
        await queueRecordingAnalysis(tx, deps.queue, companyId, upload.conversationUuid, uploadId);
        if (deps.transcribe) {
          await queueTranscription(tx, deps.queue, companyId, upload.conversationUuid, uploadId);
        }
      } else {
        // Bytes PUT again over a ready recording, and rejected: its analysis no longer describes the call.
        rerun = await queueAnalysisAfterRejection(
          tx,
          deps.queue,
          companyId,
          upload.conversationUuid,
          uploadId,
        );
      }
      const ref = await callRef(tx, companyId, upload.conversationUuid);
      await recordEvent(tx, companyId, verdict.status === 'ready' ? 'upload.ready' : 'upload.rejected', {
        ...ref,
        upload_id: uploadId,
        status: verdict.status,
        reason: verdict.reason,
      });
      return true;
    });
    if (recorded) {
      if (verdict.status === 'ready' || rerun) deps.queue.notify();
      return verdict.status;
    }
  }
  throw new Error(`upload ${uploadId} kept changing while it was verified`);
}
