/**
 * An energy detector: a frame is speech when its energy (after pre-emphasis, which lifts the speech band
 * over low-frequency hum and pink noise) stands `THRESHOLD_DB` above a noise floor that follows the
 * quietest frames: it drops at once to a quieter frame and rises slowly, so it adapts to the line's noise
 * without climbing into long speech. Speech starts after `ONSET_FRAMES` loud frames in a row and is held for
 * `HANGOVER_FRAMES` after the last loud one, so word endings and short stops are not cut.
 */
import type { FrameDetector } from './detector.ts';

/** dB over the noise floor that counts as speech. */
export const THRESHOLD_DB = 6;
/** Loud frames in a row before speech starts (clicks are not speech). */
export const ONSET_FRAMES = 3;
/** Frames speech is held after the last loud frame. */
export const HANGOVER_FRAMES = 6;
/** How fast the floor rises, in dB per frame (0.5 dB/s at 10 ms frames). */
const FLOOR_RISE_DB = 0.005;
/** Frames below this level (dB re full scale) are never speech, whatever the floor. */
const ABSOLUTE_MIN_DB = -60;
const PRE_EMPHASIS = 0.95;
const FULL_SCALE_POWER = 32768 * 32768;

/** Makes an energy detector for one channel. */
export function createEnergyDetector(_sampleRate: number): FrameDetector {
  let floor: number | undefined;
  let previous = 0;
  let loud = 0;
  let hold = 0;
  return {
    isSpeech(frame) {
      let power = 0;
      for (let i = 0; i < frame.length; i++) {
        const x = (frame[i] as number) - PRE_EMPHASIS * previous;
        previous = frame[i] as number;
        power += x * x;
      }
      const level = 10 * Math.log10(power / frame.length / FULL_SCALE_POWER + 1e-12);
      floor = floor === undefined || level < floor ? level : floor + FLOOR_RISE_DB;
      const isLoud = level > ABSOLUTE_MIN_DB && level > floor + THRESHOLD_DB;
      loud = isLoud ? loud + 1 : 0;
      if (loud >= ONSET_FRAMES) hold = HANGOVER_FRAMES;
      else if (hold > 0 && !isLoud) hold--;
      return hold > 0;
    },
    close() {},
  };
}
