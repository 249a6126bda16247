/**
 * The labelled set of the analysis (issue 14): two-channel calls of espeak-ng speech placed at known times,
 * with pauses of 0.3–3 s, overlaps of 0.5–1.5 s (the second speaker starts while the first still speaks),
 * and pink noise at a chosen SNR on each channel. The truth is where each utterance was placed (the
 * synthesized audio is trimmed of its leading and trailing silence with sox first).
 *
 * Needs `espeak-ng` and `sox` (Debian packages). Deterministic for a seed.
 *
 *   node scripts/analysis-set.ts OUT_DIR [--calls 3] [--turns 16] [--seed 1]   # writes WAVs and truth JSON
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { wavHeader } from '../src/adapters/transcribe/wav.ts';
import type { Interval } from '../src/domain/analysis/figures.ts';

/** The rate of the set's WAV files. */
export const SET_SAMPLE_RATE = 16000;

export const SENTENCES = [
  'thank you for calling how can I help you today',
  'I would like to check the status of my order',
  'sure I can help with that',
  'can you give me the order number please',
  'it is four five seven two one nine',
  'one moment while I look that up',
  'the package left our warehouse yesterday',
  'that is great news',
  'when should I expect it to arrive',
  'it should be with you by Thursday afternoon',
  'is there anything else I can do for you',
  'no that is all thank you very much',
  'I was charged twice for the same item',
  'I am sorry to hear that let me check your account',
  'I see both charges and I will refund one of them',
  'how long does the refund take',
  'usually three to five business days',
  'okay I understand',
];

/** An utterance placed in a call. */
export interface PlacedUtterance {
  channel: 0 | 1;
  text: string;
  start: number;
  stop: number;
}

/** A generated call: its WAV and its truth. */
export interface LabelledCall {
  path: string;
  durationS: number;
  snrDb: number | null;
  utterances: PlacedUtterance[];
  /** Speech per channel (the utterances' intervals, in order). */
  truth: Interval[][];
  /** Overlaps of the script: the channel that started speaking while the other spoke, and how long both did. */
  overlaps: { by: 0 | 1; seconds: number }[];
}

/** A small seeded PRNG (mulberry32), so a seed makes the same set everywhere. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const VOICES: [string[], string[]] = [
  ['-v', 'en-us', '-p', '40', '-s', '165'],
  ['-v', 'en-gb+f3', '-p', '60', '-s', '175'],
];

/** Synthesizes a sentence in a channel's voice, trimmed of silence, as samples at SET_SAMPLE_RATE. */
export function synthesize(cacheDir: string, channel: 0 | 1, text: string): Float32Array {
  const name = join(cacheDir, `${channel}-${text.replaceAll(' ', '_')}`);
  if (!existsSync(`${name}.raw`)) {
    execFileSync('espeak-ng', [...VOICES[channel], '-w', `${name}.wav`, text]);
    // Trim leading and trailing silence: the placed interval is then the speech itself.
    // -R: sox seeds its dither with a fixed number, so the same text makes the same samples on every run
    // (the recognisers of the transcription tests answer differently to different dither noise).
    execFileSync('sox', [
      '-R',
      `${name}.wav`,
      '-r',
      String(SET_SAMPLE_RATE),
      '-b',
      '16',
      '-c',
      '1',
      '-e',
      'signed-integer',
      '-t',
      'raw',
      `${name}.raw`,
      'silence',
      '1',
      '0.01',
      '1%',
      'reverse',
      'silence',
      '1',
      '0.01',
      '1%',
      'reverse',
    ]);
  }
  const bytes = readFileSync(`${name}.raw`);
  const pcm = new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2);
  return Float32Array.from(pcm, (x) => x / 32768);
}

/** Pink noise (Paul Kellet's filter over white noise), power normalised to 1. */
export function pinkNoise(length: number, next: () => number): Float32Array {
  const out = new Float32Array(length);
  let b0 = 0;
  let b1 = 0;
  let b2 = 0;
  let power = 0;
  for (let i = 0; i < length; i++) {
    const white = next() * 2 - 1;
    b0 = 0.99765 * b0 + white * 0.099046;
    b1 = 0.963 * b1 + white * 0.2965164;
    b2 = 0.57 * b2 + white * 1.0526913;
    const x = b0 + b1 + b2 + white * 0.1848;
    out[i] = x;
    power += x * x;
  }
  const scale = 1 / Math.sqrt(power / length);
  for (let i = 0; i < length; i++) out[i] = (out[i] as number) * scale;
  return out;
}

/** Lays out a script of turns: alternating speakers, pauses of 0.3–3 s, and overlaps of 0.5–1.5 s. */
function layout(turns: number, next: () => number, durations: (channel: 0 | 1, text: string) => number) {
  const utterances: PlacedUtterance[] = [];
  const overlaps: LabelledCall['overlaps'] = [];
  let channel: 0 | 1 = next() < 0.5 ? 0 : 1;
  let cursor = 0.5;
  for (let i = 0; i < turns; i++) {
    const text = SENTENCES[Math.floor(next() * SENTENCES.length)] as string;
    const length = durations(channel, text);
    const previous = utterances.at(-1);
    let start = cursor + 0.3 + next() * 2.7;
    const ownLast = utterances.findLast((u) => u.channel === channel);
    const overlap = 0.5 + next();
    // An overlap: start while the other speaks, at least 0.5 s before it stops and after it began.
    if (
      previous &&
      previous.channel !== channel &&
      next() < 0.35 &&
      previous.stop - overlap > previous.start + 0.5
    ) {
      const candidate = previous.stop - overlap;
      if (!ownLast || candidate - ownLast.stop >= 1) {
        start = candidate;
        overlaps.push({ by: channel, seconds: Math.min(overlap, length) });
      }
    }
    const placed = { channel, text, start, stop: start + length };
    utterances.push(placed);
    cursor = Math.max(cursor, placed.stop);
    // Mostly turns alternate; sometimes the same party goes on after a pause.
    if (next() < 0.8) channel = channel === 0 ? 1 : 0;
  }
  return { utterances, overlaps, end: cursor + 0.5 };
}

/** Options of one call. */
export interface CallOptions {
  dir: string;
  name: string;
  seed: number;
  turns: number;
  /** Noise level: speech power over noise power in dB; null for no noise. */
  snrDb: number | null;
}

/** Generates one two-channel call (a 16-bit WAV at 16 kHz) and its truth. */
export function makeLabelledCall(options: CallOptions): LabelledCall {
  const cacheDir = join(options.dir, 'utterances');
  mkdirSync(cacheDir, { recursive: true });
  const next = random(options.seed);
  const audio = new Map<string, Float32Array>();
  const clip = (channel: 0 | 1, text: string) => {
    const key = `${channel}:${text}`;
    if (!audio.has(key)) audio.set(key, synthesize(cacheDir, channel, text));
    return audio.get(key) as Float32Array;
  };
  const { utterances, overlaps, end } = layout(
    options.turns,
    next,
    (c, t) => clip(c, t).length / SET_SAMPLE_RATE,
  );
  const length = Math.ceil(end * SET_SAMPLE_RATE);
  const tracks = [new Float32Array(length), new Float32Array(length)];
  for (const u of utterances) {
    const samples = clip(u.channel, u.text);
    (tracks[u.channel] as Float32Array).set(samples, Math.round(u.start * SET_SAMPLE_RATE));
  }
  const truth = [0, 1].map((c) =>
    utterances.filter((u) => u.channel === c).map((u) => ({ start: u.start, stop: u.stop })),
  );
  if (options.snrDb !== null) {
    tracks.forEach((track, c) => {
      let power = 0;
      let count = 0;
      for (const { start, stop } of truth[c] as Interval[]) {
        for (let i = Math.round(start * SET_SAMPLE_RATE); i < Math.round(stop * SET_SAMPLE_RATE); i++) {
          power += (track[i] as number) ** 2;
          count++;
        }
      }
      const noiseRms = Math.sqrt(power / Math.max(1, count) / 10 ** ((options.snrDb as number) / 10));
      const noise = pinkNoise(length, next);
      for (let i = 0; i < length; i++) track[i] = (track[i] as number) + (noise[i] as number) * noiseRms;
    });
  }
  let peak = 0;
  for (const track of tracks) for (const x of track) peak = Math.max(peak, Math.abs(x));
  const gain = peak > 0.9 ? 0.9 / peak : 1;
  const pcm = new Int16Array(length * 2);
  for (let i = 0; i < length; i++) {
    pcm[2 * i] = Math.round((tracks[0]?.[i] as number) * gain * 32767);
    pcm[2 * i + 1] = Math.round((tracks[1]?.[i] as number) * gain * 32767);
  }
  const path = join(options.dir, `${options.name}.wav`);
  writeFileSync(path, Buffer.concat([wavHeader(length, 2, SET_SAMPLE_RATE), Buffer.from(pcm.buffer)]));
  return { path, durationS: length / SET_SAMPLE_RATE, snrDb: options.snrDb, utterances, truth, overlaps };
}

if (import.meta.main) {
  const [dir, ...rest] = process.argv.slice(2);
  if (!dir)
    throw new Error('usage: node scripts/analysis-set.ts OUT_DIR [--calls 3] [--turns 16] [--seed 1]');
  const flag = (name: string, fallback: number) => {
    const at = rest.indexOf(`--${name}`);
    return at >= 0 ? Number(rest[at + 1]) : fallback;
  };
  mkdirSync(dir, { recursive: true });
  for (let n = 0; n < flag('calls', 3); n++) {
    for (const snrDb of [null, 20, 10]) {
      const call = makeLabelledCall({
        dir,
        name: `call${n}-${snrDb === null ? 'clean' : `${snrDb}db`}`,
        seed: flag('seed', 1) + n,
        turns: flag('turns', 16),
        snrDb,
      });
      writeFileSync(call.path.replace(/\.wav$/, '.json'), `${JSON.stringify(call, null, 2)}\n`);
      console.log(call.path);
    }
  }
}
