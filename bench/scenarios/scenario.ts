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

/**
 * Work a side's load leaves behind when its slice ends (webhook deliveries, analysis jobs), which must not
 * run during another side's slice and is that side's cost.
 */
export interface Drain {
  /** Runs just before each slice (and the warm-up) of the side: marks where the work to wait for starts. */
  begin(): Promise<void>;
  /**
   * Waits until the work the side's load caused since `begin` is done, or a bound passes; answers how much
   * of it never finished (counted as errors) and, if any, what. `after` says what load it follows.
   */
  wait(after: 'warm-up' | 'slice'): Promise<{ missing: number; detail?: string | undefined }>;
}

/** One side of a comparison: a server under load, and the pid whose RSS to sample (the service's). */
export interface Side {
  label: string;
  pid?: number | undefined;
  spec: PhaseSpec;
  /**
   * When given, after each slice the side waits for its work to drain, and that wait counts in its
   * duration (its rate is answers / (slices + drains)); after its warm-up it waits too, uncounted.
   */
  drain?: Drain;
}

/** A side's result. */
export type SideResult = Measured & { load: LoadResult };

/**
 * Measures the sides of a comparison: each is warmed up, then their phases are cut into `rounds` slices
 * that alternate, so every side sees the same background load of a shared machine. A side with a `drain`
 * waits after each of its slices until the work they left is done, charged to it. The RSS of each pid is
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
    for (const [i, spec] of specs.entries()) {
      const drain = sides[i]?.drain;
      await drain?.begin();
      await warmUp(spec);
      const left = await drain?.wait('warm-up');
      if (left?.missing) context.log(`${sides[i]?.label}: after the warm-up, ${left.detail}`);
    }
    for (let round = 0; round < rounds; round++) {
      for (const [i, spec] of specs.entries()) {
        const drain = sides[i]?.drain;
        await drain?.begin();
        const phase = await runPhase(spec, spec.durationS / rounds);
        if (drain) {
          const started = performance.now();
          const left = await drain.wait('slice');
          const drainS = (performance.now() - started) / 1000;
          phase.durationS += drainS;
          phase.drainS = drainS;
          phase.errors += left.missing;
          if (left.missing) phase.firstFailure ??= left.detail;
        }
        phases[i]?.push(phase);
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
      `${side.label}: ${load.rps.toFixed(1)} rps` +
        (side.drain
          ? ` (${load.ok} in ${load.durationS.toFixed(2)} s, of which ${load.drainS.toFixed(2)} s draining)`
          : '') +
        `, p50 ${load.p50_ms.toFixed(2)} ms, p99 ${load.p99_ms.toFixed(2)} ms, ` +
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
