/**
 * An energy detector: a frame is speech when its energy (after pre-emphasis, which lifts the speech band
 * over low-frequency hum and pink noise) stands `THRESHOLD_DB` above a noise floor that follows the
 * quietest frames: it drops at once to a quieter frame and rises slowly, so it adapts to the line's noise
 * without climbing into long speech. Speech starts after `ONSET_FRAMES` loud frames in a row and is held for
 * `HANGOVER_FRAMES` after the last loud one, so word endings and short stops are not cut.
 *
 * The floor learns only from the line's own sound. It followed every frame down, digital silence too (the
 * exact zeros of a leg not yet answered, a mute, a hold: −120 dB), and from there its slow rise took minutes
 * to climb back to line noise of −55 dBFS, all of it counted as speech. Clamping the floor to a minimum
 * would not have done: from any minimum under the noise the slow rise still takes a minute or so, and a
 * fast rise climbs into long speech. So:
 *
 * - Digital silence (under `DIGITAL_SILENCE_DB`: zeros or a bit of dither, below any line's noise) is never
 *   speech and the floor skips it, as if it were not there: after a mute the floor is the one before it.
 *   A frame next to digital silence is partly zeros, so quieter than the line: the floor skips it too.
 * - The floor never stays under the quietest frame of the last `FLOOR_WINDOW_FRAMES` frames it learned
 *   from, so noise that steps up (a faint line that gets loud, a mute that is not quite zeros) is speech
 *   for at most that long (2 s). Speech dips to the noise far more often than that (stops, pauses, breaths:
 *   40 s espeak-ng monologues without a pause of 0.3 s, in noise, lost no frame to it), so inside speech
 *   the slow rise still decides.
 * - A channel that opens with digital silence is clean until it shows its floor: its first
 *   `PROVISIONAL_FRAMES` frames of sound are speech when over `ABSOLUTE_MIN_DB` (the old floor on zeros
 *   did the same, so a first word right after the zeros keeps its start); line noise after the zeros then
 *   costs those 50 ms, not the minutes of the old floor. A channel that opens with sound starts its floor
 *   at its first frames, as before.
 *
 * Measured on the labelled set and on digital silence before and inside noisy calls: docs/analysis.md.
 */
import type { FrameDetector } from './detector.ts';

/** dB over the noise floor that counts as speech. */
export const THRESHOLD_DB = 6;
/** Loud frames in a row before speech starts (clicks are not speech). */
export const ONSET_FRAMES = 3;
/** Frames speech is held after the last loud frame. */
export const HANGOVER_FRAMES = 6;
/** Frames under this level (dB re full scale, after pre-emphasis) are digital silence: never speech, not floor. */
export const DIGITAL_SILENCE_DB = -85;
/** The floor is at least the quietest frame of this many frames learned from (2 s of 10 ms frames). */
export const FLOOR_WINDOW_FRAMES = 200;
/** Frames of sound after opening digital silence during which only `ABSOLUTE_MIN_DB` decides. */
export const PROVISIONAL_FRAMES = 5;
/** How fast the floor rises, in dB per frame (0.5 dB/s at 10 ms frames). */
const FLOOR_RISE_DB = 0.005;
/** Frames below this level (dB re full scale) are never speech, whatever the floor. */
const ABSOLUTE_MIN_DB = -60;
const PRE_EMPHASIS = 0.95;
const FULL_SCALE_POWER = 32768 * 32768;
/** The window's minimum is kept per block of frames: a few comparisons per frame, not one per window frame. */
const BLOCKS = 8;

/** The detector's settings. The defaults are the service's; others are for measuring (docs/analysis.md). */
export interface EnergyTuning {
  thresholdDb: number;
  onsetFrames: number;
  hangoverFrames: number;
  floorRiseDb: number;
  absoluteMinDb: number;
  /** Levels under this are digital silence; -Infinity: none is (the floor then follows zeros down). */
  digitalSilenceDb: number;
  /** 0: no window (the floor rises only at `floorRiseDb`). */
  floorWindowFrames: number;
  provisionalFrames: number;
}

export const ENERGY_TUNING: Readonly<EnergyTuning> = {
  thresholdDb: THRESHOLD_DB,
  onsetFrames: ONSET_FRAMES,
  hangoverFrames: HANGOVER_FRAMES,
  floorRiseDb: FLOOR_RISE_DB,
  absoluteMinDb: ABSOLUTE_MIN_DB,
  digitalSilenceDb: DIGITAL_SILENCE_DB,
  floorWindowFrames: FLOOR_WINDOW_FRAMES,
  provisionalFrames: PROVISIONAL_FRAMES,
};

/** Makes an energy detector for one channel. */
export function createEnergyDetector(_sampleRate: number, tuning: Partial<EnergyTuning> = {}): FrameDetector {
  const t: EnergyTuning = { ...ENERGY_TUNING, ...tuning };
  const blockFrames = Math.max(1, Math.ceil(t.floorWindowFrames / BLOCKS));
  // The minima of the last BLOCKS full blocks of learned frames (a ring), and of the block being filled.
  const blockMinima = new Float64Array(BLOCKS).fill(Number.POSITIVE_INFINITY);
  let nextBlock = 0;
  let blockMin = Number.POSITIVE_INFINITY;
  let inBlock = 0;
  let floor: number | undefined;
  let learned = 0;
  /** Whether the channel opened with digital silence (known from its first frame). */
  let opensSilent: boolean | undefined;
  /** The last frame's level when it was sound, and whether the frame before it was sound too. */
  let last: number | undefined;
  let lastAfterSound = true;
  let previous = 0;
  let loud = 0;
  let hold = 0;

  const learn = (level: number) => {
    learned++;
    floor = floor === undefined || level < floor ? level : floor + t.floorRiseDb;
    if (t.floorWindowFrames <= 0) return;
    blockMin = Math.min(blockMin, level);
    if (++inBlock === blockFrames) {
      blockMinima[nextBlock] = blockMin;
      nextBlock = (nextBlock + 1) % BLOCKS;
      blockMin = Number.POSITIVE_INFINITY;
      inBlock = 0;
    }
    let windowMin = blockMin;
    // Indexed, not for-of: an iterator per frame (100 a second per channel) was garbage enough to take the
    // analysis of a 120-minute call from 11-13 MB of growth to 39-71 MB (the bound is 64).
    for (let b = 0; b < BLOCKS; b++) windowMin = Math.min(windowMin, blockMinima[b] as number);
    floor = Math.max(floor, windowMin);
  };

  return {
    isSpeech(frame, leaked = false) {
      let power = 0;
      for (let i = 0; i < frame.length; i++) {
        const x = (frame[i] as number) - PRE_EMPHASIS * previous;
        previous = frame[i] as number;
        power += x * x;
      }
      const level = 10 * Math.log10(power / frame.length / FULL_SCALE_POWER + 1e-12);
      // A leak of the other channel's voice is neither speech nor this line's noise: the floor skips it.
      const sound = level >= t.digitalSilenceDb && !leaked;
      opensSilent ??= !sound;
      // A frame teaches the floor once the next one is known: only when neither neighbour is digital silence.
      if (sound && last !== undefined && lastAfterSound) learn(last);
      lastAfterSound = last !== undefined;
      last = sound ? level : undefined;

      const provisional = opensSilent && learned < t.provisionalFrames;
      const isLoud =
        !leaked &&
        level > t.absoluteMinDb &&
        (provisional || (floor !== undefined && level > floor + t.thresholdDb));
      loud = isLoud ? loud + 1 : 0;
      if (loud >= t.onsetFrames) hold = t.hangoverFrames;
      else if (hold > 0 && !isLoud) hold--;
      return hold > 0;
    },
    close() {},
  };
}
