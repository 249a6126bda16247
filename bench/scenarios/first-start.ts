/**
 * Scenario 0: the first start of `cqs serve` on a new, empty embedded data directory, as `npm start` makes
 * it (the database created, migrated and the demo company bootstrapped), judged on its peak RSS: item 5's
 * bound counts start-up. Then scenario 0b, the start of an operator command (operator-command.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../test/helpers/process.ts';
import { deferCleanup } from '../lib/cleanup.ts';
import { spawnNode, waitForHttp } from '../lib/process.ts';
import { MEMORY_BOUNDS_MB, peakEntry, peakTarget } from '../lib/report.ts';
import { noteServicePeak, readPeakRssMb, readRssMb, trackServiceProcess } from '../lib/rss.ts';
import { childEnv, MAIN } from '../lib/service.ts';
import { measureOperatorCommands, operatorCommandEntries } from './operator-command.ts';
import type { Scenario } from './scenario.ts';

const NAME =
  '0 first start on a new embedded data directory (p50 = ms until ready; idle RSS 2 s after; peak RSS = VmHWM)';
const MAX_PEAK_MB = MEMORY_BOUNDS_MB.embedded;
/** How long after ready the idle RSS is read. */
const SETTLE_MS = 2000;

/** Scenario 0. */
export const firstStartScenario: Scenario = {
  id: 'first-start',
  entries: () => [
    { name: NAME, baseline: '—', target: peakTarget(MAX_PEAK_MB) },
    ...operatorCommandEntries(),
  ],
  async run(context) {
    const dataDir = await mkdtemp(join(tmpdir(), 'cqs-bench-first-'));
    const removeDir = deferCleanup(() => rm(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const started = performance.now();
    const child = spawnNode(
      'first start',
      MAIN,
      ['serve'],
      childEnv({ DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn' }),
    );
    trackServiceProcess(child.pid, 'first start', 'embedded');
    try {
      await waitForHttp(child, `http://127.0.0.1:${port}/readyz`, 200);
      const readyMs = performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const peak = readPeakRssMb(child.pid);
      const idle = readRssMb(child.pid);
      context.log(`first start: ready in ${readyMs.toFixed(0)} ms, peak RSS ${peak?.toFixed(1)} MB`);
      const entry = peakEntry({
        name: NAME,
        ms: readyMs,
        idleMb: idle,
        peakMb: peak,
        maxPeakMb: MAX_PEAK_MB,
      });
      // Stopped first, so the operator commands do not share the cores with it.
      noteServicePeak(child.pid);
      await child.stop();
      return [entry, ...(await measureOperatorCommands(context))];
    } finally {
      await child.stop();
      await removeDir();
    }
  },
};
