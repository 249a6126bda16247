/**
 * The energy detector around digital silence (exact zeros: a leg not yet answered, a mute, a hold). Its
 * noise floor followed the zeros down to −120 dB and then rose at 0.5 dB/s, so line noise after them was
 * speech for minutes. Frame by frame on made-up signals, then end to end (decoder, detector, figures) on
 * calls of espeak-ng speech at known times (scripts/analysis-set.ts) with digital silence put in by sox and
 * ffmpeg.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type LabelledCall, makeLabelledCall, random } from '../scripts/analysis-set.ts';
import { findDecoder } from '../src/adapters/decode/ffmpeg.ts';
import { createEnergyDetector } from '../src/adapters/vad/energy.ts';
import { type AnalysisFigures, computeFigures, type Interval } from '../src/domain/analysis/figures.ts';
import { findSpeech } from '../src/domain/analysis/recording.ts';
import { bytesReader } from './helpers/bytes-reader.ts';

const RATE = 8000;
const FRAME = 80;

/** Signal pieces of 8 kHz samples. */
const zeros = (seconds: number) => new Float64Array(Math.round(seconds * RATE));
function whiteNoise(seconds: number, rms: number, seed: number): Float64Array {
  const next = random(seed);
  // Uniform on [-a, a] has an RMS of a / √3.
  return Float64Array.from(
    { length: Math.round(seconds * RATE) },
    () => (next() * 2 - 1) * rms * Math.sqrt(3),
  );
}
/** A 1 kHz tone whose loudness rises and falls 4 times a second, as syllables do. */
function syllables(seconds: number, peak: number): Float64Array {
  return Float64Array.from(
    { length: Math.round(seconds * RATE) },
    (_, i) => peak * Math.abs(Math.sin((Math.PI * 4 * i) / RATE)) * Math.sin((2 * Math.PI * 1000 * i) / RATE),
  );
}

/** The detector's decision on each 10 ms frame of `pieces` played one after the other. */
function decisions(...pieces: Float64Array[]): boolean[] {
  const samples = new Int16Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const piece of pieces) {
    for (const x of piece) samples[at++] = Math.max(-32768, Math.min(32767, Math.round(x)));
  }
  const detector = createEnergyDetector(RATE);
  const out: boolean[] = [];
  for (let f = 0; f + FRAME <= samples.length; f += FRAME) {
    out.push(detector.isSpeech(samples.subarray(f, f + FRAME)));
  }
  detector.close();
  return out;
}
const seconds = (frames: readonly boolean[], from = 0, to = frames.length) =>
  frames.slice(from, to).filter(Boolean).length / 100;

// Line noise of −50 dBFS: over the detector's absolute minimum of −60 dB, far under speech.
const NOISE_RMS = 32768 * 10 ** (-50 / 20);
// Speech peaks of −20 dBFS.
const LOUD = 32768 * 10 ** (-20 / 20);

describe('energy detector and digital silence (frames)', () => {
  it('does not count line noise that begins after digital silence as speech', () => {
    // 5 s of zeros (the line not open yet), then 20 s of noise: the old floor made it speech for all 20 s.
    const found = decisions(zeros(5), whiteNoise(20, NOISE_RMS, 1));
    assert.equal(seconds(found, 0, 500), 0);
    assert.ok(seconds(found) <= 0.2, `${seconds(found)} s of the noise counted as speech`);
  });

  it('keeps the line noise out of speech after a mute of digital silence', () => {
    // Noise, a 2 s mute (zeros), noise again: the old floor made the 20 s after the mute speech.
    const found = decisions(whiteNoise(10, NOISE_RMS, 2), zeros(2), whiteNoise(20, NOISE_RMS, 3));
    assert.ok(seconds(found) <= 0.1, `${seconds(found)} s of the noise counted as speech`);
  });

  it('follows noise that steps up after a quiet stretch within 2 s', () => {
    // A faint line (−80 dBFS, over digital silence) that gets loud (−50 dBFS) for 20 s.
    const found = decisions(whiteNoise(5, 32768 * 1e-4, 4), whiteNoise(20, NOISE_RMS, 5));
    assert.ok(seconds(found) <= 2.5, `${seconds(found)} s of the noise counted as speech`);
  });

  it('finds speech right after digital silence', () => {
    // The floor on zeros let the first word after them through whole; it must still.
    const found = decisions(zeros(1), syllables(1, LOUD), zeros(1));
    const first = found.indexOf(true);
    assert.ok(first >= 100 && first <= 104, `speech found from frame ${first}, not 100`);
    assert.ok(seconds(found) >= 0.95 && seconds(found) <= 1.1, `${seconds(found)} s of 1 s of speech`);
  });

  it('finds speech in line noise after a mute, and nothing else', () => {
    // Noise, a 0.5 s mute, noise again with speech in it from 3.5 s to 4.5 s.
    const speech = syllables(1, LOUD);
    const found = decisions(
      whiteNoise(2, NOISE_RMS, 6),
      zeros(0.5),
      whiteNoise(3, NOISE_RMS, 7).map((x, i) => x + (speech[i - RATE] ?? 0)),
    );
    assert.ok(seconds(found, 0, 350) <= 0.1, `${seconds(found, 0, 350)} s of noise counted as speech`);
    assert.ok(seconds(found, 350, 460) >= 0.9, `${seconds(found, 350, 460)} s of 1 s of speech`);
    assert.ok(seconds(found, 460) <= 0.1, `${seconds(found, 460)} s of noise counted as speech`);
  });
});

/** Decoder, detector and figures on a two-channel WAV, as the worker runs them. */
async function analyse(path: string, truth: Interval[][], durationS: number) {
  const decoder = findDecoder();
  assert.ok(decoder, 'an ffmpeg is available');
  const found = await findSpeech(decoder, bytesReader(await readFile(path)), {
    channels: 2,
    container: 'wav',
    detector: 'energy',
  });
  const figures = (channels: Interval[][], d: number) =>
    computeFigures(d, [
      { role: 'agent', intervals: channels[0] ?? [] },
      { role: 'customer', intervals: channels[1] ?? [] },
    ]);
  return { got: figures(found.channels, found.durationS), want: figures(truth, durationS) };
}

/** Talk and overtalk within ±0.3 s of the truth (issue 14's bounds), silence within ±0.5 s, interruptions exact. */
function assertNear(got: AnalysisFigures, want: AnalysisFigures) {
  const near = (g: number | null, w: number | null, bound: number, what: string) =>
    assert.ok(Math.abs((g ?? Number.NaN) - (w ?? 0)) <= bound, `${what}: ${g} s, truth ${w} s`);
  near(got.talk_s.agent, want.talk_s.agent, 0.3, 'agent talk_s');
  near(got.talk_s.customer, want.talk_s.customer, 0.3, 'customer talk_s');
  near(got.overtalk_s, want.overtalk_s, 0.3, 'overtalk_s');
  near(got.silence_s, want.silence_s, 0.5, 'silence_s');
  assert.deepEqual(got.interruptions, want.interruptions);
}

describe('energy detector and digital silence (espeak-ng calls with line noise)', () => {
  let dir: string;
  let call: LabelledCall;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cqs-detector-silence-'));
    // The call of test/analysis.test.ts: 12 turns, pink noise at 20 dB SNR on each channel from its start.
    call = makeLabelledCall({ dir, name: 'call', seed: 7, turns: 12, snrDb: 20 });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('measures a call whose line opens after 5 s of digital silence', async () => {
    const path = join(dir, 'late.wav');
    // sox pads exact zeros (-D: no dither), so the noise begins at 5 s.
    execFileSync('sox', ['-D', call.path, path, 'pad', '5']);
    const shifted = call.truth.map((c) => c.map((i) => ({ start: i.start + 5, stop: i.stop + 5 })));
    const { got, want } = await analyse(path, shifted, call.durationS + 5);
    assertNear(got, want);
  });

  it('measures a call with a 2 s mute of each channel in the middle', async () => {
    // Each channel is muted (exact zeros) for 2 s inside its longest pause, away from its own speech.
    const mutes = call.truth.map((speech) => {
      let best = { from: 0, to: 0 };
      for (let k = 1; k < speech.length; k++) {
        const from = (speech[k - 1] as Interval).stop;
        const to = (speech[k] as Interval).start;
        if (to - from > best.to - best.from) best = { from, to };
      }
      assert.ok(best.to - best.from >= 2.6, `a pause of ${best.to - best.from} s is too short to mute 2 s`);
      const middle = (best.from + best.to) / 2;
      return [middle - 1, middle + 1] as const;
    });
    const [left, right] = mutes as [readonly [number, number], readonly [number, number]];
    const path = join(dir, 'muted.wav');
    execFileSync(findDecoder()?.path ?? 'ffmpeg', [
      ...['-nostdin', '-loglevel', 'error', '-y', '-i', call.path, '-filter_complex'],
      `[0:a]channelsplit=channel_layout=stereo[l][r];` +
        `[l]volume=0:enable='between(t,${left[0]},${left[1]})'[lm];` +
        `[r]volume=0:enable='between(t,${right[0]},${right[1]})'[rm];` +
        `[lm][rm]join=inputs=2:channel_layout=stereo[o]`,
      ...['-map', '[o]', '-c:a', 'pcm_s16le', path],
    ]);
    const { got, want } = await analyse(path, call.truth, call.durationS);
    assertNear(got, want);
  });
});
