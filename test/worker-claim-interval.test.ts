/**
 * A worker with `minClaimIntervalMs` claims a job queued after a quiet spell at once, and the jobs queued
 * in quick succession after it together, in one claim (what lets the transcripts' analyses run as a batch),
 * and by payload when asked (`KindFilter.payload`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createJobQueue, type JobQueue } from '../src/adapters/queue/queue.ts';
import { startWorker, type WorkerLog } from '../src/worker/worker.ts';
import { within } from './helpers/eventually.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

const quiet: WorkerLog = { info() {}, warn() {}, error() {} };

for (const backend of BACKENDS) {
  describe(`worker claim interval (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    it('claims at once after a quiet spell, and the jobs of a burst in one claim', async () => {
      const kind = `interval.${Math.random()}`;
      const base = createJobQueue(h.services.database.db);
      const claims: number[] = [];
      const queue: JobQueue = {
        ...base,
        async claim(limit, kinds, lease) {
          const claimed = await base.claim(limit, kinds, lease);
          if (claimed.length > 0) claims.push(claimed.length);
          return claimed;
        },
      };
      const ran: number[] = [];
      const enqueue = async (n: number) => {
        await base.enqueue(h.services.database.db, { kind, payload: { n } });
        queue.notify([kind]);
      };
      const worker = startWorker({
        queue,
        handlers: { [kind]: async (job) => void ran.push(job.payload.n as number) },
        log: quiet,
        pollIntervalMs: 60_000,
        concurrency: 10,
        kinds: { only: [kind] },
        minClaimIntervalMs: 400,
      });
      try {
        // The first claim of the worker's start finds nothing; after the interval, the first job runs at once.
        await sleep(450);
        const queuedAt = performance.now();
        await enqueue(1);
        await within(300, 'the first job runs at once', () => ran.length === 1);
        assert.ok(performance.now() - queuedAt < 300);
        for (let n = 2; n <= 5; n++) await enqueue(n);
        await within(2000, 'the burst runs', () => ran.length === 5);
        assert.deepEqual(claims, [1, 4], 'the burst in one claim');
      } finally {
        await worker.stop();
      }
    });

    it('claims only the jobs whose payload contains what the filter names', async () => {
      const kind = `payload.${Math.random()}`;
      const queue = createJobQueue(h.services.database.db);
      const db = h.services.database.db;
      await queue.enqueue(db, { kind, payload: { uploadId: null, n: 1 } });
      await queue.enqueue(db, { kind, payload: { uploadId: 7, n: 2 } });
      await queue.enqueue(db, { kind, payload: { n: 3 } });
      const claimed = await queue.claim(10, { only: [kind], payload: { uploadId: null } });
      assert.deepEqual(
        claimed.map((j) => j.payload.n),
        [1],
      );
      const rest = await queue.claim(10, { only: [kind] });
      assert.deepEqual(rest.map((j) => j.payload.n).sort(), [2, 3]);
    });
  });
}
