/**
 * `npm run bench [-- --only products,handoff]`: runs the scenarios of issue 6 against the real service
 * and its baselines on loopback, writes bench/results/latest.{json,md} and prints the table. The report
 * keeps the run's conditions: every knob in effect, the code's commit and whether the tree was dirty, and
 * per scenario the load average at its start and end and the peak RSS of every service process it started.
 */
import { fileURLToPath } from 'node:url';
import { cleanupAll } from './lib/cleanup.ts';
import { describeMachine, gitState, loadAverage1m, type ScenarioRun } from './lib/machine.ts';
import { runNode } from './lib/process.ts';
import {
  markdownTable,
  memoryVerdict,
  roundMb,
  type ScenarioEntry,
  unmeasuredEntry,
  writeReport,
} from './lib/report.ts';
import { takeServicePeaks } from './lib/rss.ts';
import { childEnv, MAIN } from './lib/service.ts';
import { readSettings, settingsNotDefault, settingsRecord } from './lib/settings.ts';
import { SCENARIOS } from './scenarios/index.ts';
import { type BenchContext, SkipScenario } from './scenarios/scenario.ts';

/** The scenarios to run, and the ids of `--only` (null when every scenario runs). */
function selected(argv: string[]): { scenarios: typeof SCENARIOS; only: string[] | null } {
  const at = argv.findIndex((a) => a === '--only' || a.startsWith('--only='));
  if (at < 0) return { scenarios: SCENARIOS, only: null };
  const arg = argv[at] as string;
  const list = (arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : (argv[at + 1] ?? '')).split(',');
  const ids = list.map((s) => s.trim()).filter(Boolean);
  const unknown = ids.filter((id) => !SCENARIOS.some((s) => s.id === id));
  if (ids.length === 0 || unknown.length > 0) {
    process.stderr.write(
      `bench: --only takes a comma-separated list of ${SCENARIOS.map((s) => s.id).join(', ')}` +
        (unknown.length ? ` (unknown: ${unknown.join(', ')})` : '') +
        '\n',
    );
    process.exit(2);
  }
  return { scenarios: SCENARIOS.filter((s) => ids.includes(s.id)), only: ids };
}

const settings = readSettings();
const settingsInEffect = settingsRecord();
const notDefault = settingsNotDefault(settingsInEffect);
const { scenarios, only } = selected(process.argv.slice(2));
const log = (message: string) =>
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping children and dropping databases`);
    void cleanupAll().finally(() => process.exit(130));
  });
}

const machine = await describeMachine(settings.postgresUrl);
const git = gitState(fileURLToPath(new URL('..', import.meta.url)));
const serviceGit = settings.serviceDir
  ? { dir: settings.serviceDir, ...gitState(settings.serviceDir) }
  : undefined;
log(
  `${machine.cpu_model}, ${machine.cores} cores, ${machine.memory_gb} GB, Node ${machine.node_version}, ` +
    `${machine.postgres_version ?? 'PostgreSQL not reachable'}, load average ${machine.load_average_1m}`,
);
log(
  `commit ${git.commit ?? 'unknown'}${git.dirty ? ' (with uncommitted changes)' : ''}` +
    (serviceGit ? `; service from ${serviceGit.dir} at ${serviceGit.commit ?? 'unknown'}` : '') +
    (notDefault.length > 0
      ? `; not the default settings: ${notDefault.map((n) => `${n}=${JSON.stringify(settingsInEffect[n])}`).join(', ')}`
      : '; default settings'),
);
// The service as `npm install` leaves it (the embedded archive made, the compile cache filled), also after
// its code changed since: otherwise the first start of each database pays for the TypeScript stripper.
log('cqs prepare (as npm install runs it)');
await runNode('prepare', MAIN, ['prepare'], childEnv({}));
const context: BenchContext = { settings, postgres: machine.postgres_version !== null, log };
const entries: ScenarioEntry[] = [];
const scenarioRuns: ScenarioRun[] = [];
try {
  for (const scenario of scenarios) {
    const loadStart = loadAverage1m();
    const started = new Date().toISOString();
    log(`scenario ${scenario.id} (load average ${loadStart})`);
    const planned = scenario.entries(settings);
    takeServicePeaks(); // only this scenario's processes from here on
    try {
      entries.push(...(await scenario.run(context)));
    } catch (error) {
      const why =
        error instanceof SkipScenario
          ? `skipped: ${error.message}`
          : `failed: ${(error as Error).message.split('\n')[0]}`;
      log(`${scenario.id} ${why}`);
      if (!(error instanceof SkipScenario)) log(String((error as Error).stack ?? error));
      entries.push(...planned.map((p) => unmeasuredEntry(p.name, p.baseline, p.target, why)));
    } finally {
      const processes = takeServicePeaks().map((p) => ({
        name: p.name,
        db: p.db,
        peak_rss_mb: p.peakMb === undefined ? null : roundMb(p.peakMb),
      }));
      const run: ScenarioRun = {
        id: scenario.id,
        started,
        ended: new Date().toISOString(),
        load_average_1m_start: loadStart,
        load_average_1m_end: loadAverage1m(),
        service_processes: processes,
      };
      scenarioRuns.push(run);
      log(
        `${scenario.id} done (load average ${run.load_average_1m_end})` +
          (processes.length > 0
            ? `; peak RSS of its service processes: ${processes.map((p) => `${p.name} ${p.peak_rss_mb?.toFixed(1) ?? '?'} MB`).join(', ')}`
            : ''),
      );
    }
  }
} finally {
  await cleanupAll();
}

const report = {
  machine: {
    ...machine,
    only_scenarios: only,
    settings: settingsInEffect,
    settings_not_default: notDefault,
    git,
    ...(serviceGit ? { service_git: serviceGit } : {}),
    scenario_runs: scenarioRuns,
  },
  scenarios: entries,
};
const paths = await writeReport(new URL('./results/', import.meta.url).pathname, report);
process.stdout.write(
  `\n${markdownTable(entries)}\n${memoryVerdict(report)}\nwritten: ${paths.json}, ${paths.md}\n`,
);
