/** The report: scenario entries, how a target is judged, and the JSON and Markdown files. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MachineInfo } from './machine.ts';

/** One row of the report, exactly the shape of `scenarios[]` in latest.json. */
export interface ScenarioEntry {
  name: string;
  rps: number | null;
  p50_ms: number | null;
  p99_ms: number | null;
  errors: number | null;
  /** The service's RSS when its load began (MB); absent in rows that measure no running service. */
  idle_rss_mb?: number | null;
  /** Its highest RSS (MB), start-up included where the row measures a service under load. */
  peak_rss_mb: number | null;
  baseline: { name: string; rps: number | null };
  ratio: number | null;
  target: string;
  /** true or false once measured; a string ("skipped: …", "failed: …") when it could not be. */
  met: boolean | string;
}

/** The whole of latest.json. */
export interface Report {
  machine: MachineInfo;
  scenarios: ScenarioEntry[];
}

/** The measurement of one side of a comparison. */
export interface Measured {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  idle_rss_mb?: number | undefined;
  peak_rss_mb: number | undefined;
}

const round = (value: number, digits: number) => {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
};
const finite = (value: number | undefined, digits: number) =>
  value === undefined || !Number.isFinite(value) ? null : round(value, digits);

/** The idle RSS of a measurement, as a key of its entry only when it was read. */
const idleOf = (service: Measured) =>
  service.idle_rss_mb === undefined ? {} : { idle_rss_mb: finite(service.idle_rss_mb, 1) };

/**
 * An entry whose ratio is the service's rps over the baseline's, met when the ratio reaches `minRatio`,
 * no errors happened (the baseline's count too), and `extra` (another condition of the target) holds.
 */
export function ratioEntry(options: {
  name: string;
  service: Measured;
  baseline: { name: string; rps: number; errors: number };
  minRatio: number;
  target?: string;
  extra?: boolean;
}): ScenarioEntry {
  const { service, baseline } = options;
  const ratio = baseline.rps > 0 ? service.rps / baseline.rps : Number.NaN;
  const errors = service.errors + baseline.errors;
  return {
    name: options.name,
    rps: finite(service.rps, 1),
    p50_ms: finite(service.p50_ms, 2),
    p99_ms: finite(service.p99_ms, 2),
    errors,
    ...idleOf(service),
    peak_rss_mb: finite(service.peak_rss_mb, 1),
    baseline: { name: baseline.name, rps: finite(baseline.rps, 1) },
    ratio: finite(ratio, 2),
    target: options.target ?? `≥ ${options.minRatio.toFixed(2)}`,
    met: errors === 0 && ratio >= options.minRatio && (options.extra ?? true),
  };
}

/**
 * An entry whose ratio is a latency now over the same latency earlier (growth), met when it stays within
 * `maxRatio` and nothing failed in either phase.
 */
export function growthEntry(options: {
  name: string;
  service: Measured;
  earlier: Measured & { name: string };
  which: 'p50_ms' | 'p99_ms';
  maxRatio: number;
}): ScenarioEntry {
  const { service, earlier, which } = options;
  const ratio = service[which] / earlier[which];
  const errors = service.errors + earlier.errors;
  return {
    name: options.name,
    rps: finite(service.rps, 1),
    p50_ms: finite(service.p50_ms, 2),
    p99_ms: finite(service.p99_ms, 2),
    errors,
    ...idleOf(service),
    peak_rss_mb: finite(service.peak_rss_mb, 1),
    baseline: {
      name: `${earlier.name} (p50 ${round(earlier.p50_ms, 2)} ms, p99 ${round(earlier.p99_ms, 2)} ms)`,
      rps: finite(earlier.rps, 1),
    },
    ratio: finite(ratio, 2),
    target: `${which.replace('_ms', '')} ≤ ${options.maxRatio.toFixed(2)}×`,
    met: errors === 0 && ratio <= options.maxRatio,
  };
}

/** An entry judged on an absolute latency: met when `which` stays at or under `maxMs` and nothing failed. */
export function latencyEntry(options: {
  name: string;
  service: Measured;
  which: 'p50_ms' | 'p99_ms';
  maxMs: number;
}): ScenarioEntry {
  const { service, which } = options;
  return {
    name: options.name,
    rps: finite(service.rps, 1),
    p50_ms: finite(service.p50_ms, 2),
    p99_ms: finite(service.p99_ms, 2),
    errors: service.errors,
    ...idleOf(service),
    peak_rss_mb: finite(service.peak_rss_mb, 1),
    baseline: { name: '—', rps: null },
    ratio: null,
    target: `${which.replace('_ms', '')} ≤ ${options.maxMs} ms`,
    met: service.errors === 0 && service[which] <= options.maxMs,
  };
}

/** Issue 16's item 5: the highest RSS any process of the service may reach, start-up included (MB). */
export const MEMORY_BOUNDS_MB = { postgres: 150, embedded: 400 } as const;

/**
 * Which of item 5's bounds an entry's peak RSS answers to, read from its name; undefined when the row's
 * "peak" is a growth rather than a process's RSS: uploads and downloads say so, and every analysis row
 * (scenario 7) holds the analysing process's growth.
 */
export function peakBound(entry: ScenarioEntry): keyof typeof MEMORY_BOUNDS_MB | undefined {
  if (/peak RSS = growth|^7 analysis /.test(entry.name)) return undefined;
  return /embedded (db|data directory)/.test(entry.name) ? 'embedded' : 'postgres';
}

/** The target of a row judged on one process's peak RSS alone. */
export const peakTarget = (maxPeakMb: number): string => `peak ≤ ${maxPeakMb} MB`;

/**
 * An entry judged on one process's peak RSS (a start or a command, not a load): `ms`, how long it took, is
 * its p50; met when the peak was read and stays at or under `maxPeakMb`. `idleMb` is a key of the entry only
 * when given (null when it could not be read).
 */
export function peakEntry(options: {
  name: string;
  ms: number;
  idleMb?: number | undefined;
  peakMb: number | undefined;
  maxPeakMb: number;
}): ScenarioEntry {
  const { peakMb } = options;
  return {
    name: options.name,
    rps: null,
    p50_ms: Math.round(options.ms),
    p99_ms: null,
    errors: 0,
    ...('idleMb' in options ? { idle_rss_mb: finite(options.idleMb, 1) } : {}),
    peak_rss_mb: finite(peakMb, 1),
    baseline: { name: '—', rps: null },
    ratio: null,
    target: peakTarget(options.maxPeakMb),
    met: peakMb !== undefined && peakMb <= options.maxPeakMb,
  };
}

/** An entry that could not be measured: `why` starts with "skipped:" or "failed:". */
export function unmeasuredEntry(
  name: string,
  baselineName: string,
  target: string,
  why: string,
): ScenarioEntry {
  return {
    name,
    rps: null,
    p50_ms: null,
    p99_ms: null,
    errors: null,
    peak_rss_mb: null,
    baseline: { name: baselineName, rps: null },
    ratio: null,
    target,
    met: why,
  };
}

/** What a row's target judges, read from the target's words as the entries above write them. */
export type Judged = { figure: number | null; unit: 'ratio' | 'ms' | 'MB' | '/s' };

/** The figure an entry's target is judged on, or undefined for a row with no target ("reported"). */
export function judgedFigure(entry: ScenarioEntry): Judged | undefined {
  const t = entry.target;
  if (/^(peak )?≤ [\d.]+ MB/.test(t)) return { figure: entry.peak_rss_mb, unit: 'MB' };
  const latency = /^(p50|p99) ≤ [\d.]+ ms/.exec(t);
  if (latency) return { figure: latency[1] === 'p50' ? entry.p50_ms : entry.p99_ms, unit: 'ms' };
  if (/^≥ [\d.]+ [a-z]+\/s/.test(t)) return { figure: entry.rps, unit: '/s' };
  if (/^(p50 |p99 )?[≥≤] [\d.]+/.test(t)) return { figure: entry.ratio, unit: 'ratio' };
  return undefined;
}

/** One line of a Markdown table, its cells' own bars escaped. */
export const markdownRow = (cells: string[]): string =>
  `| ${cells.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`;

const cell = (value: number | null, digits = 2) => (value === null ? '—' : value.toFixed(digits));
const metCell = (met: boolean | string) => (met === true ? 'met' : met === false ? '**MISSED**' : met);

/** The Markdown table of the entries. */
export function markdownTable(entries: ScenarioEntry[]): string {
  const lines = [
    '| scenario | rps | p50 ms | p99 ms | errors | idle RSS MB | peak RSS MB | baseline | baseline rps | ratio | target | met |',
    '|---|--:|--:|--:|--:|--:|--:|---|--:|--:|---|---|',
  ];
  for (const e of entries) {
    lines.push(
      markdownRow([
        e.name,
        cell(e.rps, 1),
        cell(e.p50_ms),
        cell(e.p99_ms),
        e.errors === null ? '—' : String(e.errors),
        cell(e.idle_rss_mb ?? null, 1),
        cell(e.peak_rss_mb, 1),
        e.baseline.name,
        cell(e.baseline.rps, 1),
        cell(e.ratio),
        e.target,
        metCell(e.met),
      ]),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The Markdown file: the machine, then the table. */
export function markdownReport(report: Report): string {
  const m = report.machine;
  return [
    '# Benchmark results',
    '',
    `${m.date} · ${m.cpu_model}, ${m.cores} cores, ${m.memory_gb} GB · Node ${m.node_version} · ${m.os} · ` +
      `${m.postgres_version ?? 'PostgreSQL not reachable'} · load average ${m.load_average_1m} at the start`,
    '',
    markdownTable(report.scenarios),
  ].join('\n');
}

/** Writes latest.json and latest.md into `dir`; returns their paths. */
export async function writeReport(dir: string, report: Report): Promise<{ json: string; md: string }> {
  await mkdir(dir, { recursive: true });
  const json = join(dir, 'latest.json');
  const md = join(dir, 'latest.md');
  await writeFile(json, `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(md, markdownReport(report));
  return { json, md };
}
