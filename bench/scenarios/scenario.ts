/** What a scenario is, what it is given, and the helpers every scenario uses. */
import { type LoadResult, type LoadSpec, type RawPhase, runPhase, summarize, warmUp } from '../lib/load.ts';
import { createScratchDatabase, type ScratchDatabase } from '../lib/postgres.ts';
import type { Measured, ScenarioEntry } from '../lib/report.ts';
import { readPeakRssMb, readRssMb, sampleRss } from '../lib/rss.ts';
import { type BenchService, startBenchService } from '../lib/service.ts';
import type { Settings } from '../lib/settings.ts';

/** What every scenario is given. */
export interface BenchContext {
  settings: Settings;
  /** True when the PostgreSQL server of the settings answered. */
  postgres: boolean;
  /** Prints a progress line. */
  log(message: string): void;
}

/** A row a scenario will produce, declared up front so a skipped or failed run still lists it. */
export interface PlannedEntry {
  name: string;
  baseline: string;
  target: string;
}

/** One scenario of the issue. */
export interface Scenario {
  /** Its name for `--only`. */
  id: string;
  /** The rows it reports, in order. */
  entries(settings: Settings): PlannedEntry[];
  run(context: BenchContext): Promise<ScenarioEntry[]>;
}

/** Thrown to skip a scenario (an endpoint or server it needs is missing); the message says why. */
export class SkipScenario extends Error {
  override name = 'SkipScenario';
}

/** Throws SkipScenario naming the endpoint unless the service documents it. */
export function requireRoute(
  service: { hasRoute(m: string, p: string): boolean },
  method: string,
  path: string,
) {
  if (!service.hasRoute(method, path)) throw new SkipScenario(`endpoint not available (${method} ${path})`);
}

/** A load phase without the settings' defaults. */
export type PhaseSpec = Omit<LoadSpec, 'connections' | 'durationS' | 'warmupS'> & Partial<LoadSpec>;

/** One side of a comparison: a server under load, and the pid whose RSS to sample (the service's). */
export interface Side {
  label: string;
  pid?: number | undefined;
  spec: PhaseSpec;
}

/** A side's result. */
export type SideResult = Measured & { load: LoadResult };

/**
 * Measures the sides of a comparison: each is warmed up, then their phases are cut into `rounds` slices
 * that alternate, so every side sees the same background load of a shared machine. The RSS of each pid is
 * read before the warm-up (idle) and sampled all along; its peak since the process started (start-up
 * included, VmHWM) is reported.
 */
export async function compare(
  context: BenchContext,
  sides: Side[],
  rounds = context.settings.rounds,
): Promise<SideResult[]> {
  const { settings } = context;
  const specs: LoadSpec[] = sides.map((side) => ({
    connections: settings.connections,
    durationS: settings.durationS,
    warmupS: settings.warmupS,
    ...side.spec,
  }));
  const idles = sides.map((side) => (side.pid === undefined ? undefined : readRssMb(side.pid)));
  const samplers = sides.map((side) => (side.pid === undefined ? undefined : sampleRss(side.pid)));
  const phases: RawPhase[][] = sides.map(() => []);
  let peaks: (number | undefined)[] = [];
  try {
    for (const spec of specs) await warmUp(spec);
    for (let round = 0; round < rounds; round++) {
      for (const [i, spec] of specs.entries()) {
        phases[i]?.push(await runPhase(spec, spec.durationS / rounds));
      }
    }
  } finally {
    peaks = samplers.map((s, i) => {
      const pid = sides[i]?.pid;
      const sampled = s?.stop();
      const sinceStart = pid === undefined ? undefined : readPeakRssMb(pid);
      return sampled === undefined || sinceStart === undefined ? sampled : Math.max(sampled, sinceStart);
    });
  }
  return sides.map((side, i) => {
    const load = summarize(phases[i] ?? []);
    const peak = peaks[i];
    const idle = idles[i];
    context.log(
      `${side.label}: ${load.rps.toFixed(1)} rps, p50 ${load.p50_ms.toFixed(2)} ms, p99 ${load.p99_ms.toFixed(2)} ms, ` +
        `${load.errors} errors${load.firstFailure ? ` (first: ${load.firstFailure})` : ''}` +
        (idle === undefined ? '' : `, idle RSS ${idle.toFixed(1)} MB`) +
        (peak === undefined ? '' : `, peak RSS ${peak.toFixed(1)} MB`),
    );
    return {
      rps: load.rps,
      p50_ms: load.p50_ms,
      p99_ms: load.p99_ms,
      errors: load.errors,
      idle_rss_mb: idle,
      peak_rss_mb: peak,
      load,
    };
  });
}

/** Measures one side alone (see compare). */
export async function measure(context: BenchContext, side: Side): Promise<SideResult> {
  return (await compare(context, [side]))[0] as SideResult;
}

/** Waits for `started`, runs `work` with it, and stops it whatever happens. */
export async function using<T extends { stop(): Promise<void> }, R>(
  started: Promise<T>,
  work: (it: T) => Promise<R>,
): Promise<R> {
  const it = await started;
  try {
    return await work(it);
  } finally {
    await it.stop();
  }
}

/**
 * Runs `work` with the service started on a new scratch PostgreSQL database (skipped when the server does
 * not answer); stops the service and drops the database whatever happens.
 */
export async function withScratchService<R>(
  context: BenchContext,
  name: string,
  work: (service: BenchService, db: ScratchDatabase) => Promise<R>,
): Promise<R> {
  if (!context.postgres) throw new SkipScenario('PostgreSQL not reachable');
  const db = await createScratchDatabase(context.settings.postgresUrl, name);
  try {
    return await using(
      startBenchService({ name, databaseUrl: db.url, cpuProfileDir: context.settings.cpuProfileDir }),
      (service) => work(service, db),
    );
  } finally {
    await db.drop();
  }
}
