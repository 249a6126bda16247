/**
 * Crosstalk between the two channels of a stereo call: one party's voice leaking into the other party's
 * channel (a recorder whose channels bleed into each other, a headset that hears its own earpiece). The leak
 * is loud enough for the detector (−20 or −30 dB under a voice of −20 dBFS is over its −60 dB minimum), so
 * it was that party's speech: overtalk all along the other's turns (audit of the analysis, finding 11).
 *
 * A frame of a channel is the other's voice leaking in when it is at least `CROSSTALK_GAP_DB` quieter than
 * the other channel's frame at the same time and a copy of it: normalised correlation of at least
 * `CROSSTALK_CORRELATION` with the other's frame, at a delay of 0 to `CROSSTALK_MAX_LAG_MS` (the leak comes
 * after the voice). Two parties' own voices correlate far less (at most 0.6 over the labelled set's frames
 * 15 dB apart): a quiet party speaking over a loud one is still speech.
 *
 * Not caught: leaks filtered on the way (a band-limited leak correlates about 0.7–0.8 with the voice, so
 * about half its frames are caught) and echoes later than the lag (a line echo of tens of milliseconds).
 */

/** A frame this much quieter than the other channel's may be a leak of it. */
export const CROSSTALK_GAP_DB = 15;
/** Normalised correlation with the other channel's frame from which a quiet frame is a leak. */
export const CROSSTALK_CORRELATION = 0.8;
/** The longest delay of a leak behind the voice that is searched. */
export const CROSSTALK_MAX_LAG_MS = 6;
/** Frames whose quieter side is under this level (dB re full scale) are never speech: not worth a look. */
const QUIET_DB = -60;
const PRE_EMPHASIS = 0.95;
const FULL_SCALE_POWER = 32768 * 32768;

/** Decides, frame by frame, whether one channel of a pair is the other's voice leaking in. */
export interface CrosstalkGate {
  /** For the frames of both channels at the same instant (in order): the channel that is a leak, or -1. */
  leaked(a: Int16Array, b: Int16Array): -1 | 0 | 1;
}

/** Makes a gate for a pair of channels at `sampleRate`, fed every frame in order. */
export function createCrosstalkGate(sampleRate: number): CrosstalkGate {
  const maxLag = Math.round((sampleRate * CROSSTALK_MAX_LAG_MS) / 1000);
  // Each channel's pre-emphasised samples: the last `maxLag` of the previous frames, then the current frame.
  let history: [Float64Array, Float64Array] | undefined;
  const previous = [0, 0];

  const load = (channel: 0 | 1, frame: Int16Array, into: Float64Array) => {
    into.copyWithin(0, into.length - maxLag);
    let p = previous[channel] as number;
    let power = 0;
    for (let i = 0; i < frame.length; i++) {
      const s = frame[i] as number;
      const x = s - PRE_EMPHASIS * p;
      p = s;
      into[maxLag + i] = x;
      power += x * x;
    }
    previous[channel] = p;
    return power;
  };

  return {
    leaked(a, b) {
      if (!history || history[0].length !== maxLag + a.length) {
        history = [new Float64Array(maxLag + a.length), new Float64Array(maxLag + a.length)];
      }
      const powerA = load(0, a, history[0]);
      const powerB = load(1, b, history[1]);
      const loud: 0 | 1 = powerA >= powerB ? 0 : 1;
      const quiet: 0 | 1 = loud === 0 ? 1 : 0;
      const quietPower = Math.min(powerA, powerB);
      const gap = 10 * Math.log10((Math.max(powerA, powerB) + 1e-9) / (quietPower + 1e-9));
      const quietDb = 10 * Math.log10(quietPower / a.length / FULL_SCALE_POWER + 1e-12);
      if (gap < CROSSTALK_GAP_DB || quietDb < QUIET_DB) return -1;
      const x = history[loud];
      const y = history[quiet];
      for (let lag = 0; lag <= maxLag; lag++) {
        let xy = 0;
        let xx = 0;
        for (let i = maxLag; i < y.length; i++) {
          const v = x[i - lag] as number;
          xy += v * (y[i] as number);
          xx += v * v;
        }
        // Either polarity: a leak may come inverted.
        if (Math.abs(xy) / Math.sqrt(xx * quietPower + 1e-9) >= CROSSTALK_CORRELATION) return quiet;
      }
      return -1;
    },
  };
}
