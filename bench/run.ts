/**
 * `npm run bench [-- --only products,handoff]`: runs the scenarios of issue 6 against the real service
 * and its baselines on loopback, writes bench/results/latest.{json,md} and prints the table.
 */
import { cleanupAll } from './lib/cleanup.ts';
import { describeMachine } from './lib/machine.ts';
import { runNode } from './lib/process.ts';
import { markdownTable, type ScenarioEntry, unmeasuredEntry, writeReport } from './lib/report.ts';
import { childEnv, MAIN } from './lib/service.ts';
import { readSettings } from './lib/settings.ts';
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
log(
  `${machine.cpu_model}, ${machine.cores} cores, ${machine.memory_gb} GB, Node ${machine.node_version}, ` +
    `${machine.postgres_version ?? 'PostgreSQL not reachable'}, load average ${machine.load_average_1m}`,
);
// The service as `npm install` leaves it (the embedded archive made, the compile cache filled), also after
// its code changed since: otherwise the first start of each database pays for the TypeScript stripper.
log('cqs prepare (as npm install runs it)');
await runNode('prepare', MAIN, ['prepare'], childEnv({}));
const context: BenchContext = { settings, postgres: machine.postgres_version !== null, log };
const entries: ScenarioEntry[] = [];
try {
  for (const scenario of scenarios) {
    log(`scenario ${scenario.id}`);
    const planned = scenario.entries(settings);
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
    }
  }
} finally {
  await cleanupAll();
}

const paths = await writeReport(new URL('./results/', import.meta.url).pathname, {
  machine: { ...machine, only_scenarios: only },
  scenarios: entries,
});
process.stdout.write(`\n${markdownTable(entries)}\nwritten: ${paths.json}, ${paths.md}\n`);
