/**
 * Speech detection per channel, frame by frame (10 ms frames of 16-bit PCM). Two detectors, compared on a
 * labelled set in docs/analysis.md: `energy` (this repository's, adaptive noise floor with hangover) and
 * `webrtc` (the WebRTC VAD, libfvad compiled to WebAssembly by @echogarden/fvad-wasm).
 */
import type { Interval } from '../../domain/analysis/figures.ts';
import { createEnergyDetector } from './energy.ts';
import { createWebRtcDetector } from './webrtc.ts';

/** The detectors there are; `energy` is the one the service uses (chosen by measurement). */
export type DetectorKind = 'energy' | 'webrtc';
export const DETECTOR_KINDS: readonly DetectorKind[] = ['energy', 'webrtc'];

/** Frame length of every detector. */
export const FRAME_MS = 10;

/** A detector of one channel: one decision per frame, in order. */
export interface FrameDetector {
  /**
   * True when the frame (FRAME_MS of samples at the detector's rate) holds speech. `leaked`: the frame is
   * the other channel's voice leaking in (crosstalk.ts), never speech.
   */
  isSpeech(frame: Int16Array, leaked?: boolean): boolean;
  close(): void;
}

/** Makes a detector of `kind` for one channel at `sampleRate` (8000 or 16000). */
export async function createDetector(kind: DetectorKind, sampleRate: number): Promise<FrameDetector> {
  return kind === 'energy' ? createEnergyDetector(sampleRate) : await createWebRtcDetector(sampleRate);
}

/** Turns a channel's frame decisions into intervals of seconds as they come. */
export class SpeechTracker {
  readonly intervals: Interval[] = [];
  private frames = 0;
  private openSince: number | undefined;

  private readonly frameSeconds: number;

  constructor(frameSeconds: number) {
    this.frameSeconds = frameSeconds;
  }

  /** Records the next frame's decision. */
  push(speech: boolean): void {
    if (speech && this.openSince === undefined) this.openSince = this.frames;
    if (!speech && this.openSince !== undefined) this.close(this.frames);
    this.frames++;
  }

  /** Closes speech still open at the end; returns the intervals. */
  finish(): Interval[] {
    if (this.openSince !== undefined) this.close(this.frames);
    return this.intervals;
  }

  private close(frame: number): void {
    this.intervals.push({
      start: (this.openSince as number) * this.frameSeconds,
      stop: frame * this.frameSeconds,
    });
    this.openSince = undefined;
  }
}
