/**
 * Scenario 7 (issue 14): call analysis speed as a multiple of real time for a 10-minute stereo WAV and a
 * 10-minute MP4 (AAC audio with a small H.264 video), and how far the analysing process's RSS grows while
 * it analyses a 2-hour stereo WAV (8 kHz, 230 MB: under the 250 MB upload limit). Each file is analysed
 * in a process of its own (bench/analysis/analyze-file.ts), as the worker does it, with the V8 flags of
 * `cqs serve` (the worker runs in that process). The files are made with sox and ffmpeg;
 * BENCH_ANALYSIS_SHORT_S and BENCH_ANALYSIS_LONG_S change their lengths.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { serveFlags } from '../../src/cli/heap-flags.ts';
import { roundMb, type ScenarioEntry } from '../lib/report.ts';
import type { Settings } from '../lib/settings.ts';
import type { PlannedEntry, Scenario } from './scenario.ts';

const run = promisify(execFile);
const MIN_SPEED = 100;
const MAX_GROWTH_MB = 64;
const minutes = (s: number) => (s % 60 === 0 ? `${s / 60}-minute` : `${s} s`);

function planned(settings: Settings): PlannedEntry[] {
  const short = minutes(settings.analysisShortS);
  const long = minutes(settings.analysisLongS);
  const baseline = 'real time';
  return [
    {
      name: `7 analysis of a ${short} stereo WAV (ratio = × real time)`,
      baseline,
      target: `≥ ${MIN_SPEED}×`,
    },
    { name: `7 analysis of a ${short} MP4 (ratio = × real time)`, baseline, target: `≥ ${MIN_SPEED}×` },
    {
      name: `7 analysis of a ${long} stereo WAV (peak RSS = growth of the analysing process)`,
      baseline: 'its RSS before',
      target: `≤ ${MAX_GROWTH_MB} MB`,
    },
  ];
}

interface Outcome {
  seconds: number;
  durationS: number;
  rssGrowthMb: number;
}

async function analyse(path: string, container: string): Promise<Outcome> {
  const script = new URL('../analysis/analyze-file.ts', import.meta.url).pathname;
  // The worker analyses inside `cqs serve`, whose V8 flags (young generation, heap growth) set its memory.
  const flags = serveFlags(process.env);
  const { stdout } = await run(process.execPath, [...flags, '--expose-gc', script, path, container], {
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1) as string) as Outcome;
}

function entry(plan: PlannedEntry, outcome: Outcome, kind: 'speed' | 'memory'): ScenarioEntry {
  // Judged on the figures as printed (report.ts): the speed to 1 decimal, the growth to 1.
  const speed = Math.round((outcome.durationS / outcome.seconds) * 10) / 10;
  const growth = roundMb(outcome.rssGrowthMb);
  return {
    name: plan.name,
    rps: null,
    p50_ms: Math.round(outcome.seconds * 1000),
    p99_ms: null,
    errors: 0,
    peak_rss_mb: growth,
    baseline: { name: plan.baseline, rps: null },
    ratio: speed,
    target: plan.target,
    met: kind === 'speed' ? speed >= MIN_SPEED : growth <= MAX_GROWTH_MB,
  };
}

/** Scenario 7. */
export const analysisScenario: Scenario = {
  id: 'analysis',
  entries: planned,
  async run(context) {
    const { settings } = context;
    const [wavPlan, mp4Plan, longPlan] = planned(settings) as [PlannedEntry, PlannedEntry, PlannedEntry];
    const dir = await mkdtemp(join(tmpdir(), 'cqs-bench-analysis-'));
    try {
      const short = String(settings.analysisShortS);
      const long = String(settings.analysisLongS);
      const wav = join(dir, 'short.wav');
      const mp4 = join(dir, 'short.mp4');
      const longWav = join(dir, 'long.wav');
      context.log('analysis: making the files');
      // Noise whose loudness swings every few seconds, so the detector sees speech-like on and off.
      const synth = (path: string, rate: string, length: string) =>
        run('sox', [
          '-n',
          '-r',
          rate,
          '-c',
          '2',
          '-b',
          '16',
          path,
          'synth',
          length,
          'pinknoise',
          'tremolo',
          '0.3',
          '90',
        ]);
      await synth(wav, '44100', short);
      await run('ffmpeg', [
        '-loglevel',
        'error',
        '-y',
        '-i',
        wav,
        '-f',
        'lavfi',
        '-i',
        'color=c=black:s=320x240:r=5',
        '-shortest',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-c:a',
        'aac',
        '-b:a',
        '96k',
        mp4,
      ]);
      await synth(longWav, '8000', long);
      const results: ScenarioEntry[] = [];
      for (const [plan, path, container, kind] of [
        [wavPlan, wav, 'wav', 'speed'],
        [mp4Plan, mp4, 'mp4', 'speed'],
        [longPlan, longWav, 'wav', 'memory'],
      ] as const) {
        const outcome = await analyse(path, container);
        context.log(
          `${plan.name}: ${outcome.seconds.toFixed(1)} s for ${outcome.durationS.toFixed(0)} s of audio ` +
            `(${(outcome.durationS / outcome.seconds).toFixed(0)}× real time), RSS growth ${outcome.rssGrowthMb.toFixed(1)} MB`,
        );
        results.push(entry(plan, outcome, kind));
      }
      return results;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
};
