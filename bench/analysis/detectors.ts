/**
 * Compares the speech detectors on the labelled set (scripts/analysis-set.ts): frame precision and recall
 * per detector and SNR, and the errors of the figures that issue 14 bounds (talk per channel, overtalk,
 * interruptions). Prints the Markdown table of docs/analysis.md.
 *
 *   node bench/analysis/detectors.ts [--calls 4] [--turns 20] [--dir /tmp/cqs-analysis-set]
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LabelledCall, makeLabelledCall } from '../../scripts/analysis-set.ts';
import { findDecoder } from '../../src/adapters/decode/ffmpeg.ts';
import { DETECTOR_KINDS, type DetectorKind } from '../../src/adapters/vad/detector.ts';
import {
  BRIDGE_PAUSE_S,
  computeFigures,
  type Interval,
  mergeIntervals,
} from '../../src/domain/analysis/figures.ts';
import { findSpeech } from '../../src/domain/analysis/recording.ts';
import { fileReader } from './file-reader.ts';

/** 10 ms frames marked as speech. */
function frames(intervals: Interval[], count: number): Uint8Array {
  const marks = new Uint8Array(count);
  for (const { start, stop } of mergeIntervals(intervals, BRIDGE_PAUSE_S)) {
    for (let f = Math.round(start * 100); f < Math.min(count, Math.round(stop * 100)); f++) marks[f] = 1;
  }
  return marks;
}

interface Tally {
  tp: number;
  fp: number;
  fn: number;
  talkErr: number;
  talkBias: number;
  talkCount: number;
  overtalkErr: number;
  interruptionsWrong: number;
  interruptionsTrue: number;
  seconds: number;
  audioSeconds: number;
}

const flag = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] as string) : fallback;
};

const decoder = findDecoder();
if (!decoder) throw new Error('no ffmpeg found');
const dir = flag('dir', join(tmpdir(), 'cqs-analysis-set'));
const calls = Number(flag('calls', '4'));
const turns = Number(flag('turns', '20'));
const snrs = [null, 20, 10];
const tallies = new Map<string, Tally>();

for (let n = 0; n < calls; n++) {
  for (const snrDb of snrs) {
    const call: LabelledCall = makeLabelledCall({
      dir,
      name: `call${n}-${snrDb ?? 'clean'}`,
      seed: 100 + n,
      turns,
      snrDb,
    });
    const count = Math.ceil(call.durationS * 100);
    const truthFigures = computeFigures(call.durationS, [
      { role: 'agent', intervals: call.truth[0] as Interval[] },
      { role: 'customer', intervals: call.truth[1] as Interval[] },
    ]);
    for (const kind of DETECTOR_KINDS) {
      const reader = await fileReader(call.path);
      const began = performance.now();
      const found = await findSpeech(decoder, reader, {
        channels: 2,
        container: 'wav',
        detector: kind as DetectorKind,
      });
      const seconds = (performance.now() - began) / 1000;
      await reader.close();
      const key = `${kind}|${snrDb ?? 'clean'}`;
      const t = tallies.get(key) ?? {
        tp: 0,
        fp: 0,
        fn: 0,
        talkErr: 0,
        talkBias: 0,
        talkCount: 0,
        overtalkErr: 0,
        interruptionsWrong: 0,
        interruptionsTrue: 0,
        seconds: 0,
        audioSeconds: 0,
      };
      for (const c of [0, 1]) {
        const truth = frames(call.truth[c] as Interval[], count);
        const got = frames(found.channels[c] as Interval[], count);
        for (let f = 0; f < count; f++) {
          if (got[f] && truth[f]) t.tp++;
          else if (got[f]) t.fp++;
          else if (truth[f]) t.fn++;
        }
      }
      const figures = computeFigures(found.durationS, [
        { role: 'agent', intervals: found.channels[0] as Interval[] },
        { role: 'customer', intervals: found.channels[1] as Interval[] },
      ]);
      t.talkErr = Math.max(
        t.talkErr,
        Math.abs((figures.talk_s.agent ?? 0) - (truthFigures.talk_s.agent ?? 0)),
        Math.abs((figures.talk_s.customer ?? 0) - (truthFigures.talk_s.customer ?? 0)),
      );
      for (const role of ['agent', 'customer'] as const) {
        t.talkBias += (figures.talk_s[role] ?? 0) - (truthFigures.talk_s[role] ?? 0);
        t.talkCount++;
      }
      t.overtalkErr = Math.max(
        t.overtalkErr,
        Math.abs((figures.overtalk_s ?? 0) - (truthFigures.overtalk_s ?? 0)),
      );
      for (const role of ['agent', 'customer'] as const) {
        t.interruptionsTrue += truthFigures.interruptions[role] ?? 0;
        t.interruptionsWrong += Math.abs(
          (figures.interruptions[role] ?? 0) - (truthFigures.interruptions[role] ?? 0),
        );
      }
      t.seconds += seconds;
      t.audioSeconds += call.durationS;
      tallies.set(key, t);
    }
  }
}

console.log(`decoder: ${decoder.source} ${decoder.version}; ${calls} calls of ${turns} turns per SNR\n`);
console.log(
  '| detector | SNR | frame precision | frame recall | max talk_s error (mean signed) | max overtalk_s error | interruptions wrong / true | speed (× real time, incl. decoding) |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const [key, t] of tallies) {
  const [kind, snr] = key.split('|');
  const p = t.tp / (t.tp + t.fp);
  const r = t.tp / (t.tp + t.fn);
  console.log(
    `| ${kind} | ${snr === 'clean' ? 'no noise' : `${snr} dB`} | ${p.toFixed(3)} | ${r.toFixed(3)} | ${t.talkErr.toFixed(2)} s (${t.talkBias / t.talkCount >= 0 ? '+' : ''}${(t.talkBias / t.talkCount).toFixed(2)} s) | ${t.overtalkErr.toFixed(2)} s | ${t.interruptionsWrong} / ${t.interruptionsTrue} | ${(t.audioSeconds / t.seconds).toFixed(0)}× |`,
  );
}
