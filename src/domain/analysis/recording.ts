/**
 * Finding speech in a recording: the decoded PCM is cut into 10 ms frames per channel and each channel's
 * detector decides frame by frame, so memory stays flat however long the recording is.
 */
import { type Decoder, decodePcm } from '../../adapters/decode/ffmpeg.ts';
import type { ObjectReader } from '../../adapters/storage/storage.ts';
import { createCrosstalkGate } from '../../adapters/vad/crosstalk.ts';
import { createDetector, type DetectorKind, FRAME_MS, SpeechTracker } from '../../adapters/vad/detector.ts';
import type { Interval } from './figures.ts';

/** The rate the audio is decoded at: speech detection needs no more than the telephone band. */
export const ANALYSIS_SAMPLE_RATE = 8000;

/** What was found in a recording. */
export interface RecordingSpeech {
  durationS: number;
  /** The speech of each decoded channel, in channel order. */
  channels: Interval[][];
}

/** Decodes the object and finds speech in its first `channels` channels. */
export async function findSpeech(
  decoder: Decoder,
  reader: ObjectReader,
  options: { channels: 1 | 2; container: string | null; detector: DetectorKind; maxSeconds?: number },
): Promise<RecordingSpeech> {
  const { channels } = options;
  const frameSamples = (ANALYSIS_SAMPLE_RATE * FRAME_MS) / 1000;
  const lanes = await Promise.all(
    Array.from({ length: channels }, async () => ({
      detector: await createDetector(options.detector, ANALYSIS_SAMPLE_RATE),
      tracker: new SpeechTracker(FRAME_MS / 1000),
    })),
  );
  const frames = lanes.map(() => new Int16Array(frameSamples));
  // Two channels are two parties: a frame that is the other's voice leaking in is not its party's speech.
  const gate = channels === 2 ? createCrosstalkGate(ANALYSIS_SAMPLE_RATE) : undefined;
  let sampleFrames = 0;
  try {
    const pcm = decodePcm(decoder, reader, {
      channels,
      sampleRate: ANALYSIS_SAMPLE_RATE,
      container: options.container,
      frameSamples,
      ...(options.maxSeconds === undefined ? {} : { maxSeconds: options.maxSeconds }),
    });
    const step = frameSamples * channels;
    // Each chunk holds whole frames: no samples are carried from one chunk to the next.
    for await (const chunk of pcm) {
      sampleFrames += chunk.length / channels;
      for (let at = 0; at + step <= chunk.length; at += step) {
        frames.forEach((frame, c) => {
          for (let i = 0; i < frameSamples; i++) frame[i] = chunk[at + i * channels + c] as number;
        });
        const leaked = gate ? gate.leaked(frames[0] as Int16Array, frames[1] as Int16Array) : -1;
        lanes.forEach((lane, c) => {
          lane.tracker.push(lane.detector.isSpeech(frames[c] as Int16Array, leaked === c));
        });
      }
    }
  } finally {
    for (const lane of lanes) lane.detector.close();
  }
  return {
    durationS: sampleFrames / ANALYSIS_SAMPLE_RATE,
    channels: lanes.map((lane) => lane.tracker.finish()),
  };
}
