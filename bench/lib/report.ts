/** The report: scenario entries, how a target is judged, and the JSON and Markdown files. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MachineInfo } from './machine.ts';
import type { SettingValue } from './settings.ts';

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

/** A figure in MB as the report prints it (one decimal). */
export const roundMb = (mb: number): number => round(mb, 1);

/*
 * Every target is judged on its figure as the report prints it (a ratio and a latency to 2 decimals, an
 * RSS to 1, a rate to 1): the table, the JSON, history.md and the verdict then agree, and a 0.3996 printed
 * as 0.40 meets "≥ 0.40". Noise between runs is far larger than the rounding.
 */

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
  const ratio = finite(baseline.rps > 0 ? service.rps / baseline.rps : Number.NaN, 2);
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
    ratio,
    target: options.target ?? `≥ ${options.minRatio.toFixed(2)}`,
    met: errors === 0 && ratio !== null && ratio >= options.minRatio && (options.extra ?? true),
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
  const ratio = finite(service[which] / earlier[which], 2);
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
    ratio,
    target: `${which.replace('_ms', '')} ≤ ${options.maxRatio.toFixed(2)}×`,
    met: errors === 0 && ratio !== null && ratio <= options.maxRatio,
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
  const figure = finite(service[which], 2);
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
    met: service.errors === 0 && figure !== null && figure <= options.maxMs,
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
  const peakMb = finite(options.peakMb, 1);
  return {
    name: options.name,
    rps: null,
    p50_ms: Math.round(options.ms),
    p99_ms: null,
    errors: 0,
    ...('idleMb' in options ? { idle_rss_mb: finite(options.idleMb, 1) } : {}),
    peak_rss_mb: peakMb,
    baseline: { name: '—', rps: null },
    ratio: null,
    target: peakTarget(options.maxPeakMb),
    met: peakMb !== null && peakMb <= options.maxPeakMb,
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

/** The highest peak RSS of a run under one of item 5's bounds, and where it was (null: nothing measured). */
export interface HighestPeak {
  mb: number;
  /** The row, or the scenario and its service process. */
  where: string;
}

/**
 * The highest peak RSS under a bound of item 5 over a run: every row whose peak answers to it (peakBound),
 * and every service process its scenarios started on that database (machine.scenario_runs; runs recorded
 * before it was kept have the rows only).
 */
export function highestPeak(report: Report, bound: keyof typeof MEMORY_BOUNDS_MB): HighestPeak | null {
  let best: HighestPeak | null = null;
  const consider = (mb: number | null, where: string) => {
    if (mb !== null && (best === null || mb > best.mb)) best = { mb, where };
  };
  for (const e of report.scenarios) if (peakBound(e) === bound) consider(e.peak_rss_mb, e.name);
  for (const run of report.machine.scenario_runs ?? []) {
    for (const p of run.service_processes) {
      if (p.db === bound) consider(p.peak_rss_mb, `${run.id}: ${p.name}`);
    }
  }
  return best;
}

/** One line judging both of item 5's bounds over the run (highestPeak). */
export function memoryVerdict(report: Report): string {
  const parts = (['postgres', 'embedded'] as const).map((bound) => {
    const where = bound === 'postgres' ? 'PostgreSQL' : 'embedded';
    const peak = highestPeak(report, bound);
    if (peak === null) return `${where}: nothing measured`;
    const met = peak.mb <= MEMORY_BOUNDS_MB[bound];
    return `${where} ${peak.mb.toFixed(1)} MB (${peak.where}) ≤ ${MEMORY_BOUNDS_MB[bound]} MB: ${met ? 'met' : '**MISSED**'}`;
  });
  return (
    "**Memory bounds** (issue 16 item 5; the highest peak RSS of every row's process and of every service " +
    `process the scenarios started): ${parts.join('; ')}.`
  );
}

const settingText = (value: SettingValue) =>
  value === null ? 'unset' : Array.isArray(value) ? JSON.stringify(value.join(' ')) : String(value);

/** The lines of the report that say under which conditions the run ran (absent fields: nothing). */
function conditionLines(m: MachineInfo): string[] {
  const lines: string[] = [];
  const code = (g: NonNullable<MachineInfo['git']>) =>
    `${g.commit ?? 'unknown commit'}` +
    (g.dirty === null
      ? ' (whether the tree was dirty is unknown)'
      : g.dirty
        ? ' with uncommitted changes'
        : ', clean') +
    (g.dirty && g.changed?.length
      ? ` (${g.changed.slice(0, 10).join(', ')}${g.changed.length > 10 ? `, and ${g.changed.length - 10} more in latest.json` : ''})`
      : '');
  if (m.git) lines.push(`Code: ${code(m.git)}.`);
  if (m.service_git) lines.push(`Service from ${m.service_git.dir}: ${code(m.service_git)}.`);
  if (m.settings) {
    lines.push(
      `Settings: ${Object.entries(m.settings)
        .map(([name, value]) => `${name}=${settingText(value)}`)
        .join(', ')}.`,
    );
  }
  return lines.flatMap((l) => [l, '']);
}

/** The table of the scenarios that ran: when, the load average at their start and end, their services' peaks. */
function scenarioRunsTable(m: MachineInfo): string[] {
  const runs = m.scenario_runs;
  if (!runs || runs.length === 0) return [];
  const lines = [
    'Scenarios, in the order they ran (load average over 1 minute at their start and end; the peak RSS, VmHWM since start, of every service process each started):',
    '',
    '| scenario | started (UTC) | minutes | load average | service processes, peak RSS MB |',
    '|---|---|--:|---|---|',
  ];
  for (const r of runs) {
    const minutes = (Date.parse(r.ended) - Date.parse(r.started)) / 60_000;
    lines.push(
      markdownRow([
        r.id,
        r.started.slice(11, 19),
        minutes.toFixed(1),
        `${r.load_average_1m_start} → ${r.load_average_1m_end}`,
        r.service_processes.length === 0
          ? '—'
          : r.service_processes
              .map(
                (p) =>
                  `${p.name} (${p.db === 'postgres' ? 'PostgreSQL' : 'embedded'}) ${p.peak_rss_mb?.toFixed(1) ?? '?'}`,
              )
              .join(', '),
      ]),
    );
  }
  return [...lines, ''];
}

/**
 * The Markdown file: what kind of run it was (a partial or non-default run says so first), the machine and
 * the run's conditions, the table, the memory bounds' verdict, and the scenarios as they ran.
 */
export function markdownReport(report: Report): string {
  const m = report.machine;
  const warnings: string[] = [];
  if (m.only_scenarios) {
    warnings.push(
      `**Partial run** (\`--only ${m.only_scenarios.join(',')}\`): only these scenarios ran: ${m.only_scenarios.join(', ')}. ` +
        'Not a full run of `npm run bench`; `npm run bench:history` leaves it out.',
    );
  }
  if (m.settings_not_default?.length) {
    warnings.push(
      `**Not the default settings**: ${m.settings_not_default.map((n) => `${n}=${settingText(m.settings?.[n] ?? null)}`).join(', ')}. ` +
        '`npm run bench:history` does not count it as a full run.',
    );
  }
  return [
    '# Benchmark results',
    '',
    ...warnings.flatMap((w) => [w, '']),
    `${m.date} · ${m.cpu_model}, ${m.cores} cores, ${m.memory_gb} GB · Node ${m.node_version} · ${m.os} · ` +
      `${m.postgres_version ?? 'PostgreSQL not reachable'} · load average ${m.load_average_1m} at the start`,
    '',
    ...conditionLines(m),
    markdownTable(report.scenarios),
    memoryVerdict(report),
    '',
    ...scenarioRunsTable(m),
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
