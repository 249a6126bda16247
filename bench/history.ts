/**
 * `npm run bench:history [-- --last 10]`: every full run of `npm run bench` kept in this repository (each
 * committed version of bench/results/latest.json, and the working tree's when it holds a newer run), as two
 * Markdown tables: how often each target was met over the last runs and between which figures, and what each
 * run missed. Written to bench/results/history.md and printed. Runs of `--only`, and runs whose settings
 * were not the defaults, are left out.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BARE_JSON_BASELINE } from './lib/baseline.ts';
import {
  highestPeak,
  type Judged,
  judgedFigure,
  MEMORY_BOUNDS_MB,
  markdownRow,
  type Report,
  type ScenarioEntry,
} from './lib/report.ts';

const LATEST = 'bench/results/latest.json';
const root = fileURLToPath(new URL('..', import.meta.url));

/** One recorded run: the report and the commit that recorded it (null: the working tree's). */
interface Run {
  report: Report;
  commit: string | null;
}

const git = (...args: string[]) =>
  execFileSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });

/**
 * Whether a report is of a whole run: every scenario, with the default settings. Reports since
 * `only_scenarios` was kept say whether `--only` ran; before it, a run of `--only` is told by its size: every
 * full run committed held at least 11 rows, every partial one at most 6. Reports since
 * `settings_not_default` was kept say which knobs were not at their defaults (none for a full run); those
 * before it are taken as they were counted then.
 */
const isFull = ({ machine, scenarios }: Report) =>
  machine.only_scenarios === undefined
    ? scenarios.length >= 10
    : machine.only_scenarios === null && (machine.settings_not_default ?? []).length === 0;

/** Every full run, newest first, each once: a report committed again is named by its first commit. */
function recordedRuns(): Run[] {
  const runs: Run[] = [];
  const seen = new Set<string>();
  const add = (text: string, commit: string | null) => {
    const report = JSON.parse(text) as Report;
    if (!isFull(report) || seen.has(report.machine.date)) return;
    seen.add(report.machine.date);
    runs.push({ report, commit });
  };
  const commits = git('log', '--format=%h', '--', LATEST).split('\n').filter(Boolean).reverse();
  for (const commit of commits) add(git('show', `${commit}:${LATEST}`), commit);
  add(readFileSync(new URL(`../${LATEST}`, import.meta.url), 'utf8'), null);
  return runs.sort((a, b) => b.report.machine.date.localeCompare(a.report.machine.date));
}

/** A row's name without the notes in its last parentheses, unless they name its database. */
function shortName(name: string): string {
  const notes = /\s*\(([^()]*)\)$/.exec(name);
  if (!notes || notes[1] === 'PostgreSQL' || notes[1] === 'embedded db') return name;
  return name.slice(0, notes.index);
}

const figureText = (judged: Judged) => {
  const { figure, unit } = judged;
  if (figure === null) return '—';
  if (unit === 'ms') return `${figure.toFixed(2)} ms`;
  if (unit === 'MB') return `${figure.toFixed(1)} MB`;
  if (unit === '/s') return `${Math.round(figure)}/s`;
  return figure.toFixed(2);
};

const runName = (report: Report) => report.machine.date.slice(0, 16).replace('T', ' ');
const hostName = (report: Report) =>
  report.machine.cpu_model
    .replaceAll('(R)', '')
    .replace(/ Processor$/, '')
    .replace(/\s+/g, ' ');

/** One half of a row's target: most targets have one; an upload's and a download's two, joined by "; ". */
interface Half {
  /** Added to the row's name for the half's line (empty for the first). */
  suffix: string;
  target: string;
  judged: Judged;
  met: boolean;
}

const tenths = (mb: number) => Math.round(mb * 10) / 10;

/**
 * The halves of an entry's target, each judged on its own figure: "≥ 0.80" on the ratio; "RSS growth ≤ the
 * baseline's + 16 MB (service +a MB, baseline +b MB)" on a − b (the service's growth beyond the bare
 * server's), "growth ≤ 64 MB" on the growth in the peak column. Only for entries with a judged figure.
 */
function halves(e: ScenarioEntry): Half[] {
  const judged = judgedFigure(e) as Judged;
  const [first = e.target, second] = e.target.split('; ');
  if (second === undefined) return [{ suffix: '', target: e.target, judged, met: e.met === true }];
  const measured = typeof e.met !== 'string';
  const min = Number(/^≥ ([\d.]+)/.exec(first)?.[1] ?? Number.NaN);
  const out: Half[] = [
    {
      suffix: '',
      target: first,
      judged,
      met: measured && e.errors === 0 && judged.figure !== null && judged.figure >= min,
    },
  ];
  const relative =
    /^RSS growth ≤ the baseline's \+ ([\d.]+) MB(?: \(service \+?(-?[\d.]+) MB, baseline \+?(-?[\d.]+) MB\))?/.exec(
      second,
    );
  const absolute = /^growth ≤ ([\d.]+) MB/.exec(second);
  if (relative) {
    const max = Number(relative[1]);
    const over = relative[2] === undefined ? null : tenths(Number(relative[2]) - Number(relative[3]));
    out.push({
      suffix: ": RSS growth beyond the baseline's",
      target: `≤ ${max} MB`,
      judged: { figure: over, unit: 'MB' },
      met: measured && over !== null && over <= max,
    });
  } else if (absolute) {
    const max = Number(absolute[1]);
    out.push({
      suffix: ': RSS growth',
      target: `≤ ${max} MB`,
      judged: { figure: e.peak_rss_mb, unit: 'MB' },
      met: measured && e.peak_rss_mb !== null && e.peak_rss_mb <= max,
    });
  } else {
    out.push({
      suffix: `: ${second}`,
      target: second,
      judged: { figure: null, unit: 'ratio' },
      met: e.met === true,
    });
  }
  return out;
}

/** One run's figure for a line of the targets' table, and whether that run met the target. */
type Judgement = { figure: number | null; met: boolean };

/** A line of the targets' table from its judgements, newest first. */
function summaryLine(row: string, target: string, unit: Judged['unit'], judgements: Judgement[]): string {
  const figures = judgements.flatMap((j) => (j.figure === null ? [] : [j.figure])).sort((a, b) => a - b);
  const at = (i: number) => figureText({ figure: figures[i] ?? null, unit });
  return markdownRow([
    row,
    target,
    String(judgements.length),
    String(judgements.filter((j) => j.met).length),
    at(0),
    at(Math.floor((figures.length - 1) / 2)),
    at(figures.length - 1),
    figureText({ figure: judgements[0]?.figure ?? null, unit }),
  ]);
}

/** A run's highest peak under a bound, in bold when over it. */
function peakCell(report: Report, bound: keyof typeof MEMORY_BOUNDS_MB): string {
  const peak = highestPeak(report, bound)?.mb ?? null;
  if (peak === null) return '—';
  return peak > MEMORY_BOUNDS_MB[bound] ? `**${peak.toFixed(1)}**` : peak.toFixed(1);
}

/**
 * The table of targets: over the newest `last` runs, how often each row's target and each of issue 16's
 * memory bounds was met, and between which figures.
 */
function targetsTable(runs: Run[], last: number): string {
  const window = runs.slice(0, last);
  const newest = window[0];
  const oldest = window.at(-1);
  if (!newest || !oldest) return 'No full run is recorded yet.';
  const order: string[] = [];
  const byName = new Map<string, ScenarioEntry[]>();
  for (const { report } of window) {
    for (const entry of report.scenarios) {
      if (!judgedFigure(entry)) continue;
      if (!byName.has(entry.name)) {
        byName.set(entry.name, []);
        order.push(entry.name);
      }
      byName.get(entry.name)?.push(entry);
    }
  }
  const lines = [
    `Over the last ${window.length} full runs (${runName(oldest.report)} to ${runName(newest.report)} UTC):`,
    '',
    '| row | target | runs | met | lowest | median | highest | newest |',
    '|---|---|--:|--:|--:|--:|--:|--:|',
  ];
  for (const name of order) {
    const entries = byName.get(name) ?? [];
    const split = entries.map(halves);
    for (const [h, newest] of (split[0] ?? []).entries()) {
      const judgements = split.map((hs) => ({
        figure: hs[h]?.judged.figure ?? null,
        met: hs[h]?.met ?? false,
      }));
      lines.push(
        summaryLine(`${shortName(name)}${newest.suffix}`, newest.target, newest.judged.unit, judgements),
      );
    }
  }
  for (const bound of ['postgres', 'embedded'] as const) {
    const judgements = window.map(({ report }) => {
      const figure = highestPeak(report, bound)?.mb ?? null;
      return { figure, met: figure !== null && figure <= MEMORY_BOUNDS_MB[bound] };
    });
    const where = bound === 'postgres' ? 'on PostgreSQL' : 'embedded';
    lines.push(
      summaryLine(
        `highest peak RSS ${where}, any row or service process`,
        `≤ ${MEMORY_BOUNDS_MB[bound]} MB`,
        'MB',
        judgements,
      ),
    );
  }
  return lines.join('\n');
}

/** The load average at the run's start, and its range over the scenarios' starts and ends when recorded. */
function loadCell(report: Report): string {
  const start = String(report.machine.load_average_1m ?? '—');
  const loads = (report.machine.scenario_runs ?? []).flatMap((r) => [
    r.load_average_1m_start,
    r.load_average_1m_end,
  ]);
  if (loads.length === 0) return start;
  return `${start} (${Math.min(...loads)}-${Math.max(...loads)})`;
}

/** The table of runs, newest first: host, load, the bare server's rate, the highest peaks, what missed. */
function runsTable(runs: Run[]): string {
  const lines = [
    `| run (UTC) | recorded in | host | load (at the start, and over its scenarios) | bare node:http, requests/s (product lists' phase) | peak RSS MB, PostgreSQL (≤ ${MEMORY_BOUNDS_MB.postgres}) | embedded (≤ ${MEMORY_BOUNDS_MB.embedded}) | missed |`,
    '|---|---|---|--:|--:|--:|--:|---|',
  ];
  for (const { report, commit } of runs) {
    const missed = report.scenarios
      .filter((e) => e.met !== true)
      .flatMap((e) => {
        if (typeof e.met === 'string' || !judgedFigure(e))
          return [`${shortName(e.name)} ${typeof e.met === 'string' ? e.met : ''}`.trim()];
        // Each half of its target that missed, with its own figure (a memory-only miss shows the memory).
        const hs = halves(e);
        const missedHalves = hs.filter((h) => !h.met);
        return (missedHalves.length > 0 ? missedHalves : hs.slice(0, 1)).map(
          (h) => `${shortName(e.name)}${h.suffix} ${figureText(h.judged)}`,
        );
      });
    const bare = report.scenarios.find((e) => e.baseline.name === BARE_JSON_BASELINE);
    lines.push(
      markdownRow([
        runName(report),
        commit ?? 'uncommitted',
        hostName(report),
        loadCell(report),
        bare?.baseline.rps == null ? '—' : String(Math.round(bare.baseline.rps)),
        peakCell(report, 'postgres'),
        peakCell(report, 'embedded'),
        missed.length === 0 ? 'nothing' : missed.join('; '),
      ]),
    );
  }
  return lines.join('\n');
}

const argv = process.argv.slice(2);
const lastAt = argv.indexOf('--last');
const last = lastAt >= 0 ? Number(argv[lastAt + 1]) : 10;
if (!Number.isInteger(last) || last < 1) {
  process.stderr.write('bench:history: --last takes a whole number of runs, at least 1\n');
  process.exit(2);
}
if (git('rev-parse', '--is-shallow-repository').trim() === 'true') {
  process.stderr.write(
    'bench:history: this clone is shallow, so it holds only the runs of its last commits\n',
  );
}
const runs = recordedRuns();
const text = [
  '# Every full run of the bench',
  '',
  `Made by \`npm run bench:history\` from each version of \`${LATEST}\` in git's history (a run that was`,
  "never committed there is not in it). A row's figure is the one its target judges: a ratio, a latency, a",
  'peak RSS or a rate.',
  '',
  targetsTable(runs, last),
  '',
  `All ${runs.length} full runs, newest first: the highest peak RSS of a process under each of issue 16's memory bounds (in bold when over it), and each row whose own target was not met, with its figure:`,
  '',
  runsTable(runs),
  '',
].join('\n');
writeFileSync(new URL('./results/history.md', import.meta.url), text);
process.stdout.write(text);
