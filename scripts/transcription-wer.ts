/**
 * Measures the `pocketsphinx` engine on a fixed espeak-ng set: every sentence of scripts/analysis-set.ts in
 * both of its voices (en-us male, en-gb female), placed one after another with 1 s pauses in one 16 kHz mono
 * channel, clean and with pink noise at 20 dB SNR. Prints the word error rate (word-level edit distance over
 * the whole channel's words, after lower-casing and dropping punctuation), the real-time factor (wall and CPU seconds of
 * one recogniser / audio seconds) and the recogniser's peak RSS; with `--minutes N` also a channel of N
 * minutes made by repeating the set (memory for long audio). Needs espeak-ng, sox and pocketsphinx.
 *
 *   node scripts/transcription-wer.ts [--minutes 10] [--json OUT.json]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePocketsphinx } from '../src/adapters/transcribe/pocketsphinx.ts';
import { wavHeader } from '../src/adapters/transcribe/wav.ts';
import { SENTENCES, SET_SAMPLE_RATE, synthesize } from './analysis-set.ts';

/** Word-level edit distance between a reference and a hypothesis. */
export function wordErrors(reference: readonly string[], hypothesis: readonly string[]): number {
  let previous = Array.from({ length: hypothesis.length + 1 }, (_, j) => j);
  for (let i = 1; i <= reference.length; i++) {
    const row = [i];
    for (let j = 1; j <= hypothesis.length; j++) {
      const substitution = (previous[j - 1] as number) + (reference[i - 1] === hypothesis[j - 1] ? 0 : 1);
      row.push(Math.min(substitution, (previous[j] as number) + 1, (row[j - 1] as number) + 1));
    }
    previous = row;
  }
  return previous[hypothesis.length] as number;
}

/** Lower-case words without punctuation. */
export const wordsOf = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9' ]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean);

/** A seeded PRNG (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The set's utterances as one channel: samples and the reference words, `repeat` times over. */
function buildChannel(dir: string, snrDb: number | null, repeat: number) {
  mkdirSync(dir, { recursive: true });
  const clips = [0, 1].flatMap((voice) =>
    SENTENCES.map((text) => ({ text, samples: synthesize(dir, voice as 0 | 1, text) })),
  );
  const gap = SET_SAMPLE_RATE;
  const length = repeat * clips.reduce((n, c) => n + c.samples.length + gap, gap);
  const track = new Float32Array(length);
  const reference: string[] = [];
  let at = gap;
  let speechPower = 0;
  let speechSamples = 0;
  for (let r = 0; r < repeat; r++) {
    for (const clip of clips) {
      track.set(clip.samples, at);
      for (const x of clip.samples) speechPower += x * x;
      speechSamples += clip.samples.length;
      at += clip.samples.length + gap;
      reference.push(...wordsOf(clip.text));
    }
  }
  if (snrDb !== null) {
    const next = random(11);
    const noiseRms = Math.sqrt(speechPower / speechSamples / 10 ** (snrDb / 10));
    // Pink noise (Paul Kellet's filter), scaled to unit power by its measured RMS.
    let b0 = 0;
    let b1 = 0;
    let b2 = 0;
    const noise = new Float32Array(length);
    let power = 0;
    for (let i = 0; i < length; i++) {
      const white = next() * 2 - 1;
      b0 = 0.99765 * b0 + white * 0.099046;
      b1 = 0.963 * b1 + white * 0.2965164;
      b2 = 0.57 * b2 + white * 1.0526913;
      noise[i] = b0 + b1 + b2 + white * 0.1848;
      power += (noise[i] as number) ** 2;
    }
    const scale = noiseRms / Math.sqrt(power / length);
    for (let i = 0; i < length; i++) track[i] = (track[i] as number) + (noise[i] as number) * scale;
  }
  const pcm = Int16Array.from(track, (x) => Math.max(-32768, Math.min(32767, Math.round(x * 0.8 * 32767))));
  return { pcm, reference, durationS: length / SET_SAMPLE_RATE };
}

/**
 * Runs the engine's command line (as src/adapters/transcribe/pocketsphinx.ts does) under GNU time: its
 * output is parsed by the engine's own parser; wall and CPU seconds and peak RSS come from time.
 */
function recognise(path: string) {
  const started = performance.now();
  const run = spawnSync(
    '/usr/bin/time',
    ['-f', '%M %U %S', 'pocketsphinx_continuous', '-infile', path, '-time', 'yes', '-logfn', '/dev/null'],
    { encoding: 'utf8', maxBuffer: 1 << 28 },
  );
  const wallS = (performance.now() - started) / 1000;
  if (run.status !== 0) throw new Error(`pocketsphinx failed: ${run.stderr.slice(-500)}`);
  const [kb = 0, user = 0, sys = 0] = (run.stderr.trim().split('\n').at(-1) ?? '').split(' ').map(Number);
  return { segments: parsePocketsphinx(run.stdout), wallS, cpuS: user + sys, rssMb: Math.round(kb / 1024) };
}

async function measure(dir: string, name: string, snrDb: number | null, repeat: number) {
  const { pcm, reference, durationS } = buildChannel(join(dir, 'utterances'), snrDb, repeat);
  const path = join(dir, `${name}.wav`);
  writeFileSync(path, Buffer.concat([wavHeader(pcm.length, 1, SET_SAMPLE_RATE), Buffer.from(pcm.buffer)]));
  const { segments, wallS, cpuS, rssMb } = recognise(path);
  const hypothesis = segments.flatMap((s) => wordsOf(s.text));
  const errors = wordErrors(reference, hypothesis);
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  return {
    set: name,
    snr_db: snrDb,
    audio_s: Math.round(durationS * 10) / 10,
    reference_words: reference.length,
    hypothesis_words: hypothesis.length,
    wer: r3(errors / reference.length),
    real_time_factor_wall: r3(wallS / durationS),
    real_time_factor_cpu: r3(cpuS / durationS),
    recogniser_peak_rss_mb: rssMb,
    load_average: r3(loadavg()[0] ?? 0),
    sample: segments
      .slice(0, 3)
      .map((s) => s.text)
      .join(' | '),
  };
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const flag = (name: string) => {
    const at = args.indexOf(`--${name}`);
    return at >= 0 ? args[at + 1] : undefined;
  };
  const dir = mkdtempSync(join(tmpdir(), 'cqs-wer-'));
  try {
    const results = [await measure(dir, 'clean', null, 1), await measure(dir, 'noise-20db', 20, 1)];
    const minutes = Number(flag('minutes') ?? 0);
    if (minutes > 0) {
      const setSeconds = results[0]?.audio_s ?? 1;
      results.push(await measure(dir, `long-${minutes}min`, null, Math.ceil((minutes * 60) / setSeconds)));
    }
    for (const r of results) {
      console.log(
        `FIGURE set=${r.set} audio_s=${r.audio_s} words=${r.reference_words} wer=${r.wer} ` +
          `rtf_wall=${r.real_time_factor_wall} rtf_cpu=${r.real_time_factor_cpu} ` +
          `recogniser_rss_mb=${r.recogniser_peak_rss_mb} load=${r.load_average}`,
      );
      console.log(`  first segments: ${r.sample}`);
    }
    const out = flag('json');
    if (out) writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
