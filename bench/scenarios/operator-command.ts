/**
 * Scenario 0b, part of `first-start` (another start of a `cqs` process): an operator command, `cqs company
 * create`, as README tells a new user to run it: on a new embedded data directory (which it creates and
 * migrates), on that directory again, and on a migrated PostgreSQL database. Judged on its peak RSS against
 * item 5's bounds for the service, since it runs on the same small box; its time until it exits is reported.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deferCleanup } from '../lib/cleanup.ts';
import { createScratchDatabase } from '../lib/postgres.ts';
import { runNode, spawnNode } from '../lib/process.ts';
import {
  MEMORY_BOUNDS_MB,
  peakEntry,
  peakTarget,
  type ScenarioEntry,
  unmeasuredEntry,
} from '../lib/report.ts';
import { sampleRss } from '../lib/rss.ts';
import { childEnv, MAIN } from '../lib/service.ts';
import type { BenchContext, PlannedEntry } from './scenario.ts';

/** Runs of each variant: the row's p50 is their median time, its peak their highest. */
const RUNS = 3;
/** How often the child's VmHWM is read (it only grows within one image; the process replaces its image once). */
const SAMPLE_MS = 5;

const VARIANTS = [
  { label: 'on a new embedded data directory', maxPeakMb: MEMORY_BOUNDS_MB.embedded },
  { label: 'on that embedded data directory again', maxPeakMb: MEMORY_BOUNDS_MB.embedded },
  { label: 'on PostgreSQL', maxPeakMb: MEMORY_BOUNDS_MB.postgres },
] as const;
type Variant = (typeof VARIANTS)[number];

const BASELINE = '—';
const nameOf = (v: Variant) =>
  `0b operator command cqs company create ${v.label} (p50 = ms until it exits; peak RSS = VmHWM)`;

/** One run of `cqs company create` with `env`: how long it took and its peak RSS (MB; unread: undefined). */
async function runOnce(
  env: Record<string, string>,
  n: number,
): Promise<{ ms: number; peakMb: number | undefined }> {
  const started = performance.now();
  const child = spawnNode(
    'operator command',
    MAIN,
    ['company', 'create', `Bench Operator ${n}`],
    childEnv(env),
  );
  const sampler = sampleRss(child.pid, SAMPLE_MS, 'VmHWM');
  const code = await child.exited;
  const peakMb = sampler.stop();
  const ms = performance.now() - started;
  if (code !== 0) throw new Error(`cqs company create exited with ${code}:\n${child.output()}`);
  return { ms, peakMb };
}

function entry(v: Variant, runs: { ms: number; peakMb: number | undefined }[]): ScenarioEntry {
  const times = runs.map((r) => r.ms).sort((a, b) => a - b);
  const peaks = runs.map((r) => r.peakMb);
  return peakEntry({
    name: nameOf(v),
    ms: times[Math.floor(times.length / 2)] as number,
    peakMb: peaks.includes(undefined) ? undefined : Math.max(...(peaks as number[])),
    maxPeakMb: v.maxPeakMb,
  });
}

async function measureVariant(
  context: BenchContext,
  v: Variant,
  envFor: (run: number) => Record<string, string>,
): Promise<ScenarioEntry> {
  const runs: { ms: number; peakMb: number | undefined }[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await runOnce(envFor(i), i));
  const row = entry(v, runs);
  context.log(
    `operator command ${v.label}: ${runs.map((r) => `${r.ms.toFixed(0)} ms, ${r.peakMb?.toFixed(1)} MB`).join('; ')}`,
  );
  return row;
}

/** The rows of scenario 0b. */
export const operatorCommandEntries = (): PlannedEntry[] =>
  VARIANTS.map((v) => ({ name: nameOf(v), baseline: BASELINE, target: peakTarget(v.maxPeakMb) }));

/** Measures scenario 0b. */
export async function measureOperatorCommands(context: BenchContext): Promise<ScenarioEntry[]> {
  const root = await mkdtemp(join(tmpdir(), 'cqs-bench-operator-'));
  const removeRoot = deferCleanup(() => rm(root, { recursive: true, force: true }));
  const out: ScenarioEntry[] = [];
  try {
    const dirs = Array.from({ length: RUNS }, (_, i) => join(root, `data-${i}`));
    const [first, again] = VARIANTS;
    out.push(await measureVariant(context, first, (i) => ({ DATA_DIR: dirs[i] as string })));
    out.push(await measureVariant(context, again, (i) => ({ DATA_DIR: dirs[i] as string })));
    if (context.postgres) {
      const db = await createScratchDatabase(context.settings.postgresUrl, 'operator');
      try {
        const env = { DATABASE_URL: db.url };
        await runNode('migrate', MAIN, ['migrate'], childEnv(env));
        out.push(await measureVariant(context, VARIANTS[2], () => env));
      } finally {
        await db.drop();
      }
    } else {
      const v = VARIANTS[2];
      out.push(
        unmeasuredEntry(nameOf(v), BASELINE, peakTarget(v.maxPeakMb), 'skipped: PostgreSQL not reachable'),
      );
    }
    return out;
  } finally {
    await removeRoot();
  }
}
