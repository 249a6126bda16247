/**
 * What the paged reads' scenarios (8: the call list, 12: the event feed) share: a page from the start of a
 * long list against one deep in it, in alternating short slices on one connection, judged on the deep
 * page's p99 against the first's and on the first page's p50.
 */
import type { ResponseCheck } from '../lib/load.ts';
import { growthEntry, latencyEntry, type ScenarioEntry } from '../lib/report.ts';
import type { BenchService } from '../lib/service.ts';
import { type BenchContext, compare, type PhaseSpec, type SideResult } from './scenario.ts';

/** The deep page's p99 may be at most this many times the first page's. */
const MAX_DEEP_RATIO = 1.25;
/** The first page's p50, in ms, at most. */
export const MAX_PAGE_P50_MS = 10;
/** Where the deep page starts, as a share of the list. */
export const DEPTH = 0.9;
/** Slices per side. */
const ROUNDS = 5;

/** The targets of the two entries, as the table shows them. */
export const PAGE_TARGETS = {
  deep: `p99 ≤ ${MAX_DEEP_RATIO.toFixed(2)}×`,
  first: `p50 ≤ ${MAX_PAGE_P50_MS} ms`,
};

/** A paged read of `path` on the scenarios' connections, every answer checked by `check`. */
export function pageSpec(
  context: BenchContext,
  service: BenchService,
  path: string,
  headers: Record<string, string>,
  check: ResponseCheck,
): PhaseSpec {
  return { url: service.url, path, headers, check, connections: context.settings.growthConnections };
}

/**
 * Measures `firstPath` against `deepPath` on `service` with the key in `headers`, every answer checked by
 * `check`; returns the deep page's entry, then the first page's when `firstName` is given.
 */
export async function firstVsDeep(
  context: BenchContext,
  service: BenchService,
  options: {
    label: string;
    firstLabel: string;
    firstPath: string;
    deepPath: string;
    headers: Record<string, string>;
    check: ResponseCheck;
    deepName: string;
    firstName?: string;
  },
): Promise<ScenarioEntry[]> {
  const spec = (path: string) => pageSpec(context, service, path, options.headers, options.check);
  const firstLabel = `${options.firstLabel}, ${options.label}`;
  const [first, deep] = (await compare(
    context,
    [
      { label: firstLabel, pid: service.pid, spec: spec(options.firstPath) },
      { label: `deep page, ${options.label}`, pid: service.pid, spec: spec(options.deepPath) },
    ],
    ROUNDS,
  )) as [SideResult, SideResult];
  return [
    growthEntry({
      name: options.deepName,
      service: deep,
      earlier: { ...first, name: firstLabel },
      which: 'p99_ms',
      maxRatio: MAX_DEEP_RATIO,
    }),
    ...(options.firstName === undefined
      ? []
      : [latencyEntry({ name: options.firstName, service: first, which: 'p50_ms', maxMs: MAX_PAGE_P50_MS })]),
  ];
}
