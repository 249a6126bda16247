/**
 * The transcription engine interface (decision 29): one channel of a recording in (a 16 kHz mono 16-bit WAV
 * file and where the speech detector heard speech in it), timed segments with text out, and the words and
 * their confidence where the engine gives them. Engines are adapters (src/adapters/transcribe/); the
 * service picks one by TRANSCRIBER.
 */
import type { Interval } from '../analysis/figures.ts';

/** The rate every engine is given: what speech recognisers are trained on. */
export const TRANSCRIPTION_SAMPLE_RATE = 16000;

/** One channel of audio, decoded for an engine. */
export interface ChannelAudio {
  /** A 16 kHz mono 16-bit PCM WAV file (44-byte header). */
  wavPath: string;
  durationS: number;
  /** Where the speech detector heard speech (seconds from the start): engines may cut the audio there. */
  speech: Interval[];
}

/** A word of a segment, with times in seconds from the start of the channel. */
export interface TranscribedWord {
  word: string;
  start: number;
  stop: number;
  /** 0–1 where the engine gives it. */
  confidence?: number;
}

/** A segment of speech and its text, times in seconds from the start of the channel. */
export interface TranscribedSegment {
  start: number;
  stop: number;
  text: string;
  /** 0–1 where the engine gives it. */
  confidence?: number;
  words?: TranscribedWord[];
}

/** An engine: transcribes one channel. Throws TranscriptionError when it cannot. */
export interface TranscriptionEngine {
  /** What made the transcript, as the call's transcription shows it (`pocketsphinx en-us`, `openai whisper-1`). */
  readonly name: string;
  /**
   * Transcribes one channel. `signal` aborts it (the run failed on another channel): the engine stops its
   * work and rejects, with any error.
   */
  transcribe(audio: ChannelAudio, signal?: AbortSignal): Promise<TranscribedSegment[]>;
}

/**
 * An engine failed. `transient` errors (a timeout, a 429 or 5xx after the engine's own retries, a refused
 * connection) are worth another attempt of the job later; the others (a 4xx, an answer that is no
 * transcript, no engine binary) are not.
 */
export class TranscriptionError extends Error {
  override name = 'TranscriptionError';
  readonly transient: boolean;

  constructor(message: string, transient: boolean, options?: ErrorOptions) {
    super(message, options);
    this.transient = transient;
  }
}

/** A stored transcript segment: the role of the channel it was heard on. */
export interface RoleSegment {
  role: 'agent' | 'customer' | 'unknown';
  text: string;
  start: number;
  stop: number;
  confidence?: number;
}

const round = (seconds: number) => Math.round(seconds * 1000) / 1000;

/** Merges the channels' segments in time order (by start, then stop), each with its channel's role. */
export function mergeChannels(
  channels: readonly { role: RoleSegment['role']; segments: readonly TranscribedSegment[] }[],
): RoleSegment[] {
  const all: RoleSegment[] = [];
  for (const { role, segments } of channels) {
    for (const s of segments) {
      const text = s.text.trim();
      if (text === '') continue;
      const segment: RoleSegment = {
        role,
        text,
        start: round(s.start),
        stop: round(Math.max(s.start, s.stop)),
      };
      if (s.confidence !== undefined) segment.confidence = round(s.confidence);
      all.push(segment);
    }
  }
  return all.sort((a, b) => a.start - b.start || a.stop - b.stop);
}

/**
 * What an engine rejects with once its `signal` stopped it. Transient, should it ever end a job: nothing
 * was wrong with the channel itself.
 */
export function stoppedError(): TranscriptionError {
  return new TranscriptionError('the transcription was stopped: another channel failed', true);
}
