/**
 * `cqs company update ID --retention-days N|none` as an operator runs it (a real child process on the
 * service's database), and the daily sweep then erasing what it set.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { RETENTION_SWEEP_JOB } from '../src/domain/calls/retention.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { runCli } from './helpers/process.ts';
import { get, makeCall, readKeys } from './helpers/reads.ts';

const DAY = 86_400;

for (const backend of BACKENDS) {
  describe(`cqs company update --retention-days (${backend})`, () => {
    let dataDir: string;
    let h: Harness;
    /** The environment that points `cqs` at the harness's database. */
    let cliEnv: Record<string, string>;
    before(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'cqs-cli-retention-'));
      // On PGlite the CLI needs the data directory to itself: the harness is closed while it runs.
      h = await startHarness(backend, { DATA_DIR: dataDir });
      cliEnv = { DATA_DIR: dataDir, ...(h.databaseUrl ? { DATABASE_URL: h.databaseUrl } : {}) };
    });
    after(async () => {
      await h.close();
      await rm(dataDir, { recursive: true, force: true });
    });

    /** Runs `cqs` once per command, in order, on the harness's database (PGlite: with the harness stopped). */
    async function cqs(...commands: string[][]) {
      const run = async () => {
        const runs = [];
        for (const args of commands) runs.push(await runCli(args, cliEnv));
        return runs;
      };
      if (backend === 'postgres') return run();
      await h.close();
      try {
        return await run();
      } finally {
        h = await startHarness(backend, { DATA_DIR: dataDir });
      }
    }

    it('sets the period (the sweep then erases older calls only), clears it with none, refuses bad input', async () => {
      const c = await h.company();
      const keys = await readKeys(c);
      const now = Date.now() / 1000;
      const old = await makeCall(h, c, keys, { conversationId: 'old', startTime: now - 40 * DAY });
      const recent = await makeCall(h, c, keys, { conversationId: 'recent', startTime: now - 10 * DAY });
      // Refused before the database is opened (so even while the service holds PGlite's directory): 2.
      const [notANumber, badId] = await Promise.all([
        runCli(['company', 'update', c.id, '--retention-days', 'ninety'], cliEnv),
        runCli(['company', 'update', 'acme', '--retention-days', '30'], cliEnv),
      ]);
      assert.equal(notANumber?.code, 2, notANumber?.err);
      assert.match(notANumber?.err ?? '', /--retention-days: "ninety" is not a whole number of days/);
      assert.equal(badId?.code, 2, badId?.err);
      assert.match(badId?.err ?? '', /is not a company id/);

      const unknownId = '00000000-0000-4000-8000-000000000000';
      const [zero, unknown, set] = await cqs(
        ['company', 'update', c.id, '--retention-days', '0'],
        ['company', 'update', unknownId, '--retention-days', '30'],
        ['company', 'update', c.id, '--retention-days', '30'],
      );
      assert.equal(zero?.code, 4, zero?.err);
      assert.match(zero?.err ?? '', /retention_days/);
      assert.equal(unknown?.code, 4, unknown?.err);
      assert.match(unknown?.err ?? '', /not found/);
      assert.equal(set?.code, 0, set?.err);
      assert.equal(JSON.parse(set?.out ?? '').id, c.id);
      assert.equal(JSON.parse(set?.out ?? '').retentionDays, 30);

      await h.services.queue.enqueue(h.services.database.db, { kind: RETENTION_SWEEP_JOB });
      await h.runJobs();
      assert.equal((await get(h, `/api/v1/calls/${old.id}`, keys.admin)).statusCode, 404);
      assert.equal((await get(h, `/api/v1/calls/${recent.id}`, keys.admin)).statusCode, 200);

      const [cleared] = await cqs(['company', 'update', c.id, '--retention-days', 'none']);
      assert.equal(cleared?.code, 0, cleared?.err);
      assert.equal(JSON.parse(cleared?.out ?? '').retentionDays, null);
      const later = await makeCall(h, c, keys, { conversationId: 'later', startTime: now - 400 * DAY });
      await h.services.queue.enqueue(h.services.database.db, { kind: RETENTION_SWEEP_JOB });
      await h.runJobs();
      assert.equal((await get(h, `/api/v1/calls/${later.id}`, keys.admin)).statusCode, 200);
    });
  });
}
