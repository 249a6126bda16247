import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { eq, isNull, sql, TransactionRollbackError } from 'drizzle-orm';
import { rowsOf } from '../src/adapters/db/prepared.ts';
import { jobs } from '../src/adapters/db/schema.ts';
import { CLAIM, createJobQueue, type Job, type JobQueue } from '../src/adapters/queue/queue.ts';
import { loadConfig } from '../src/config/config.ts';
import { closeServices, openServices } from '../src/server.ts';
import { PURGE_DEAD_JOBS_TASK, periodicTasks } from '../src/worker/jobs.ts';
import { PermanentJobError, runDueJobs, runJob, startWorker, type WorkerLog } from '../src/worker/worker.ts';
import { BACKENDS, createPostgresDatabase, type Harness, startHarness } from './helpers/harness.ts';
import { issueTestUpload, makeTestMedia, pathOf, type TestMedia } from './helpers/media.ts';

const quiet: WorkerLog = { info() {}, warn() {}, error() {} };

async function until(check: () => Promise<boolean> | boolean, timeoutMs = 5000): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error('timed out waiting');
    await sleep(10);
  }
  return Date.now() - started;
}

for (const backend of BACKENDS) {
  describe(`job queue (${backend})`, () => {
    let h: Harness;
    let queue: JobQueue;
    const db = () => h.services.database.db;
    const row = async (id: number) => (await db().select().from(jobs).where(eq(jobs.id, id)))[0];

    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());
    beforeEach(async () => {
      await db().delete(jobs);
      queue = createJobQueue(db(), { backoffSeconds: () => 0 });
    });

    it('wakes only the workers that take a kind it names, and every worker when it names none', () => {
      const woken: string[] = [];
      const offs = [
        queue.onNotify(() => woken.push('webhooks'), { only: ['webhook.deliver'] }),
        queue.onNotify(() => woken.push('others'), { except: ['webhook.deliver'] }),
        queue.onNotify(() => woken.push('all')),
      ];
      queue.notify(['call.analyze']);
      assert.deepEqual(woken.splice(0), ['others', 'all']);
      queue.notify(['webhook.deliver']);
      assert.deepEqual(woken.splice(0), ['webhooks', 'all']);
      queue.notify();
      assert.deepEqual(woken.splice(0), ['webhooks', 'others', 'all']);
      for (const off of offs) off();
      queue.notify();
      assert.deepEqual(woken, []);
    });

    it('claims a job once, counts the attempt, and deletes it when done', async () => {
      assert.equal(await queue.enqueue(db(), { kind: 'test', payload: { n: 1 } }), true);
      const [job, ...rest] = await queue.claim(10);
      assert.ok(job);
      assert.equal(rest.length, 0);
      assert.deepEqual(
        { kind: job.kind, payload: job.payload, attempts: job.attempts },
        {
          kind: 'test',
          payload: { n: 1 },
          attempts: 1,
        },
      );
      assert.deepEqual(await queue.claim(10), [], 'a claimed job is not claimed again');
      await queue.complete(job);
      assert.equal(await row(job.id), undefined);
    });

    it('claims no more jobs than asked, even when jobs was analysed nearly empty', async () => {
      // Statistics of one row make PostgreSQL plan a pick inside `id in (…)` as the inner side of a
      // nested loop, run again for each job row: each run skipped what the runs before had locked.
      await queue.enqueue(db(), { kind: 'test' });
      await db().execute(sql`analyze jobs`);
      await db().delete(jobs);
      for (let n = 0; n < 20; n++) await queue.enqueue(db(), { kind: 'test', payload: { n } });
      for (const limit of [1, 2, 1, 3]) {
        const claimed = await queue.claim(limit);
        assert.equal(claimed.length, limit, `claim(${limit}) took ${claimed.length} jobs`);
      }
      const left = await db().select().from(jobs).where(isNull(jobs.lockedUntil));
      assert.equal(left.length, 13);
    });

    it('keeps one queued job per dedupe key, and frees the key when the job is done', async () => {
      assert.equal(await queue.enqueue(db(), { kind: 'test', dedupeKey: 'k' }), true);
      assert.equal(await queue.enqueue(db(), { kind: 'test', dedupeKey: 'k' }), false);
      const [job] = await queue.claim(10);
      assert.ok(job);
      assert.equal(await queue.enqueue(db(), { kind: 'test', dedupeKey: 'k' }), false, 'not while it runs');
      await queue.complete(job);
      assert.equal(await queue.enqueue(db(), { kind: 'test', dedupeKey: 'k' }), true);
    });

    it('runs a running job once more when its key is enqueued with rerunIfRunning, and only then', async () => {
      const plain = { kind: 'test', dedupeKey: 'r' };
      const again = { ...plain, rerunIfRunning: true };
      await queue.enqueue(db(), plain);
      const [first] = await queue.claim(10);
      assert.ok(first);
      assert.equal(await queue.enqueue(db(), plain), false, 'not without the option');
      assert.equal(await queue.complete(first), false);
      assert.deepEqual(await queue.claim(10), []);

      assert.equal(await queue.enqueue(db(), again), true);
      assert.equal(
        await queue.enqueue(db(), again),
        false,
        'a queued job is not flagged: it is still to run',
      );
      const [second] = await queue.claim(10);
      assert.ok(second);
      assert.equal(await queue.enqueue(db(), again), true, 'flagged while it runs');
      assert.equal(await queue.enqueue(db(), again), true);
      assert.equal(await queue.complete(second), true, 'queued again');
      const [third] = await queue.claim(10);
      assert.ok(third);
      assert.notEqual(third.id, second.id);
      assert.equal(third.attempts, 1, 'a run again is a new job, not a retry');
      assert.deepEqual(third.payload, {});
      assert.equal(await queue.complete(third), false, 'once: the two flags were one run');
      assert.deepEqual(await queue.claim(10), []);
    });

    it('a flag still uncommitted when the job completes makes it run again: completion waits for it', async () => {
      const again = { kind: 'test', dedupeKey: 'w', rerunIfRunning: true };
      await queue.enqueue(db(), again);
      const [job] = await queue.claim(10);
      assert.ok(job);
      let flagged: () => void = () => {};
      const enqueued = new Promise<void>((resolve) => {
        flagged = resolve;
      });
      const writer = db().transaction(async (tx) => {
        assert.equal(await queue.enqueue(tx, again), true);
        flagged();
        await sleep(300);
      });
      await enqueued;
      assert.equal(await queue.complete(job), true);
      await writer;
      const [next] = await queue.claim(10);
      assert.ok(next, 'the job runs again');
      await queue.complete(next);
    });

    it('does not run a job before its time', async () => {
      await queue.enqueue(db(), { kind: 'test', delaySeconds: 60 });
      assert.deepEqual(await queue.claim(10), []);
    });

    it('retries a failed job with backoff and records the error, then declares it dead', async () => {
      const slow = createJobQueue(db(), { backoffSeconds: (attempt) => attempt * 100 });
      await slow.enqueue(db(), { kind: 'test', dedupeKey: 'flaky', maxAttempts: 2 });
      const [first] = await slow.claim(1);
      assert.ok(first);
      assert.equal(await slow.fail(first, new Error('boom')), 'retry');
      const waiting = await row(first.id);
      assert.equal(waiting?.lastError, 'Error: boom');
      assert.equal(waiting?.lockedUntil, null);
      assert.ok((waiting?.runAt.getTime() ?? 0) > Date.now() + 60_000, 'backed off');
      assert.deepEqual(await slow.claim(1), []);
      // Make it due again, and fail its last attempt.
      await db()
        .update(jobs)
        .set({ runAt: new Date(Date.now() - 1000) })
        .where(eq(jobs.id, first.id));
      const [second] = await slow.claim(1);
      assert.equal(second?.attempts, 2);
      assert.equal(await slow.fail(second as Job, new Error('boom again')), 'dead');
      const dead = await row(first.id);
      assert.equal(dead?.lastError, 'Error: boom again');
      assert.equal(dead?.dedupeKey, null, 'the key is free for new work');
      assert.deepEqual(await slow.claim(1), [], 'a dead job is not claimed');
      assert.equal(await slow.enqueue(db(), { kind: 'test', dedupeKey: 'flaky' }), true);
    });

    it("runs a failed job again at the time its error names (a server's Retry-After), at most 6 h away", async () => {
      const later = (ms: number) => Object.assign(new Error('busy'), { retryAt: new Date(Date.now() + ms) });
      for (const [asked, expected] of [
        [3600_000, 3600_000],
        [30 * 3600_000, 6 * 3600_000],
        [-60_000, 0],
      ] as const) {
        await queue.enqueue(db(), { kind: 'test' });
        const [job] = await queue.claim(1);
        assert.ok(job);
        await runJob(queue, { test: async () => Promise.reject(later(asked)) }, job, quiet);
        const waiting = await row(job.id);
        assert.equal(waiting?.attempts, 1, 'the attempt is spent: a server that always asks again ends it');
        const due = (waiting?.runAt.getTime() ?? 0) - Date.now();
        assert.ok(Math.abs(due - expected) < 60_000, `asked ${asked} ms, due in ${due} ms`);
        await db().delete(jobs);
      }
    });

    it('claims again a job whose worker lost its lease, and ignores the old worker', async () => {
      const leased = createJobQueue(db(), { leaseSeconds: 1 });
      await leased.enqueue(db(), { kind: 'test' });
      const [lost] = await leased.claim(1);
      assert.ok(lost);
      assert.deepEqual(await leased.claim(1), []);
      await sleep(1100);
      const [again] = await leased.claim(1);
      assert.equal(again?.id, lost.id);
      assert.equal(again?.attempts, 2);
      await leased.complete(lost);
      assert.ok(await row(lost.id), 'the stale worker cannot complete the new claim');
      await leased.complete(again as Job);
      assert.equal(await row(lost.id), undefined);
    });

    it('renews the lease of a running job: a run longer than its lease is not claimed again', async () => {
      const leased = createJobQueue(db(), { leaseSeconds: 1 });
      await leased.enqueue(db(), { kind: 'long' });
      let runs = 0;
      let ending = false;
      const waiting: (() => void)[] = [];
      const worker = startWorker({
        queue: leased,
        handlers: {
          long: async () => {
            runs++;
            if (!ending) await new Promise<void>((resolve) => waiting.push(resolve));
          },
        },
        log: quiet,
        pollIntervalMs: 50,
        concurrency: 2,
      });
      try {
        assert.ok(await until(() => runs === 1, 2000));
        // Three leases long: another claimer (and the worker's own free slot) looks all along.
        const stolen: Job[] = [];
        const started = Date.now();
        while (Date.now() - started < 3000) {
          stolen.push(...(await leased.claim(1, { only: ['long'] })));
          await sleep(100);
        }
        assert.deepEqual(stolen, []);
        assert.equal(runs, 1);
      } finally {
        // Every run is let go, a second one too (the worker's own free slot took the job again before).
        ending = true;
        for (const resume of waiting.splice(0)) resume();
        await worker.stop();
      }
      assert.equal((await db().select().from(jobs)).length, 0, 'completed by its one run');
    });

    it('reads no dead job when it claims: the dead are past the end of its range of jobs_due_idx', async () => {
      // Dead jobs as the queue makes them: a permanent failure, and a failure of the last attempt.
      for (let n = 0; n < 1000; n++) await queue.enqueue(db(), { kind: 'test', maxAttempts: 1 + (n % 2) });
      for (let claimed = await queue.claim(500); claimed.length > 0; claimed = await queue.claim(500)) {
        for (const job of claimed) {
          const outcome = await queue.fail(job, new Error('no'), { permanent: job.maxAttempts === 1 });
          if (outcome === 'retry') await queue.fail((await queue.claim(1))[0] as Job, new Error('no'));
        }
      }
      const live = await db().select().from(jobs).where(sql`${jobs.attempts} < ${jobs.maxAttempts}`);
      assert.equal(live.length, 0, 'every job is dead');
      await queue.enqueue(db(), { kind: 'test', payload: { live: true } });
      await db().execute(sql`analyze jobs`);
      // The claim's own statement, explained as it runs (it claims the live job, and rolls back).
      let plan: unknown;
      await db()
        .transaction(async (tx) => {
          await tx.execute(sql.raw(`prepare dead_jobs_claim as ${CLAIM.text}`));
          plan = await tx.execute(
            sql`explain (analyze, format json) execute dead_jobs_claim(10, 60, null, null, null)`,
          );
          await tx.execute(sql`deallocate dead_jobs_claim`);
          tx.rollback();
        })
        .catch((error: unknown) => {
          if (!(error instanceof TransactionRollbackError)) throw error;
        });
      const removed: number[] = [];
      const walk = (node: Record<string, unknown>) => {
        if (typeof node['Rows Removed by Filter'] === 'number') removed.push(node['Rows Removed by Filter']);
        for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
      };
      const [top] = rowsOf<{ 'QUERY PLAN': { Plan: Record<string, unknown> }[] }>(plan);
      const json = top?.['QUERY PLAN'];
      const parsed = typeof json === 'string' ? JSON.parse(json) : json;
      walk(parsed[0].Plan);
      assert.deepEqual(
        removed.filter((n) => n > 0),
        [],
        `the claim filtered out rows: ${JSON.stringify(parsed[0].Plan).slice(0, 2000)}`,
      );
    });

    it('purges dead jobs queued more than EVENT_RETENTION_DAYS ago, hourly, and keeps every other job', async () => {
      // Labels name what the test makes of each job: dead or not, and its age.
      const labels = ['dead-old', 'dead-edge', 'dead-young', 'retrying-old', 'queued-old'];
      for (const label of labels)
        await queue.enqueue(db(), {
          kind: 'test',
          payload: { label },
          maxAttempts: label === 'retrying-old' ? 3 : 1,
        });
      for (const job of await queue.claim(10)) {
        const label = (job.payload as { label: string }).label;
        if (label !== 'queued-old') await queue.fail(job, new Error('no'));
        else await db().update(jobs).set({ lockedUntil: null }).where(eq(jobs.id, job.id));
      }
      await db().execute(sql`
        update jobs j set created_at = now() - v.age
        from (values ('dead-old', interval '31 days'), ('dead-edge', interval '29 days 23 hours'),
          ('dead-young', interval '1 day'), ('retrying-old', interval '31 days'), ('queued-old', interval '31 days')
        ) as v(label, age)
        where j.payload->>'label' = v.label`);
      const task = periodicTasks(h.services).find((t) => t.name === PURGE_DEAD_JOBS_TASK);
      assert.ok(task, 'the worker runs the dead jobs purge');
      assert.equal(task.everyMs, 3600_000);
      const left = async () =>
        (await db().select({ payload: jobs.payload }).from(jobs))
          .map((r) => (r.payload as { label: string }).label)
          .sort();
      assert.equal(h.config.events.retentionDays, 30);
      await task.run();
      assert.deepEqual(await left(), ['dead-edge', 'dead-young', 'queued-old', 'retrying-old']);
      await task.run();
      assert.deepEqual(await left(), ['dead-edge', 'dead-young', 'queued-old', 'retrying-old']);
    });

    it('declares dead a job whose worker died on its last attempt', async () => {
      const leased = createJobQueue(db(), { leaseSeconds: 1 });
      await leased.enqueue(db(), { kind: 'test', maxAttempts: 1, dedupeKey: 'last' });
      assert.ok((await leased.claim(1))[0]);
      await sleep(1100);
      const [orphan] = await leased.claim(1);
      assert.equal(orphan?.attempts, 2);
      let ran = false;
      const test = async () => {
        ran = true;
      };
      await runJob(leased, { test }, orphan as Job, quiet);
      assert.equal(ran, false);
      const dead = await row(orphan?.id ?? 0);
      assert.match(dead?.lastError ?? '', /last attempt/);
      assert.equal(dead?.dedupeKey, null);
    });

    it('hands each job to one of several concurrent claimers (SKIP LOCKED)', async () => {
      for (let i = 0; i < 40; i++) await queue.enqueue(db(), { kind: 'test', payload: { i } });
      const claims = await Promise.all(Array.from({ length: 8 }, () => queue.claim(5)));
      const ids = claims.flat().map((j) => j.id);
      assert.equal(ids.length, 40);
      assert.equal(new Set(ids).size, 40);
    });

    it('runs handlers: a failure is retried, a permanent failure is not, an unknown kind is dead', async () => {
      let calls = 0;
      const handlers = {
        flaky: async () => {
          calls++;
          if (calls === 1) throw new Error('first time fails');
        },
        broken: async () => {
          throw new PermanentJobError('cannot ever work');
        },
      };
      await queue.enqueue(db(), { kind: 'flaky' });
      await queue.enqueue(db(), { kind: 'broken', maxAttempts: 9 });
      await queue.enqueue(db(), { kind: 'nobody-handles-this' });
      await runDueJobs(queue, handlers, quiet);
      assert.equal(calls, 2);
      const left = await db().select().from(jobs);
      assert.deepEqual(left.map((j) => [j.kind, j.attempts]).sort(), [
        ['broken', 9],
        ['nobody-handles-this', 5],
      ]);
    });

    it('wakes the worker at once on notify, polls for other processes, and waits for jobs in flight on stop', async () => {
      const seen: string[] = [];
      let release: () => void = () => {};
      const worker = startWorker({
        queue,
        handlers: {
          fast: async (job) => void seen.push(String(job.payload.name)),
          slow: () =>
            new Promise<void>((resolve) => {
              release = () => {
                seen.push('slow done');
                resolve();
              };
            }),
        },
        log: quiet,
        pollIntervalMs: 60_000,
        concurrency: 2,
      });
      try {
        await sleep(50);
        await queue.enqueue(db(), { kind: 'fast', payload: { name: 'woken' } });
        queue.notify();
        const waited = await until(() => seen.includes('woken'), 2000);
        assert.ok(waited < 1000, `took ${waited} ms`);
        await queue.enqueue(db(), { kind: 'slow' });
        queue.notify();
        await until(async () => (await db().select().from(jobs))[0]?.lockedUntil != null);
      } finally {
        const stopped = worker.stop();
        let done = false;
        void stopped.then(() => {
          done = true;
        });
        await sleep(100);
        assert.equal(done, false, 'stop waits for the job in flight');
        release();
        await stopped;
      }
      assert.deepEqual(seen, ['woken', 'slow done']);
      assert.deepEqual(await db().select().from(jobs), [], 'the job in flight finished and was recorded');

      // Another process enqueues (no notify here): the worker's poll finds the job.
      const polling = startWorker({
        queue: createJobQueue(db()),
        handlers: { fast: async (job) => void seen.push(String(job.payload.name)) },
        log: quiet,
        pollIntervalMs: 50,
        concurrency: 1,
      });
      await queue.enqueue(db(), { kind: 'fast', payload: { name: 'polled' } });
      await until(() => seen.includes('polled'));
      await polling.stop();
    });
  });

  describe(`jobs survive a restart (${backend})`, () => {
    it('finds a queued job after the service is closed and opened again', async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'cqs-restart-'));
      const pgDb = backend === 'postgres' ? await createPostgresDatabase() : undefined;
      try {
        const config = loadConfig({
          DATA_DIR: dataDir,
          CQS_BOOTSTRAP: 'false',
          ...(pgDb ? { DATABASE_URL: pgDb.url } : {}),
        });
        const first = await openServices(config);
        await first.queue.enqueue(first.database.db, { kind: 'survivor', payload: { x: 1 } });
        await closeServices(first);
        const second = await openServices(config);
        try {
          const [job] = await second.queue.claim(1);
          assert.equal(job?.kind, 'survivor');
          assert.deepEqual(job?.payload, { x: 1 });
        } finally {
          await closeServices(second);
        }
      } finally {
        await pgDb?.drop();
        await rm(dataDir, { recursive: true, force: true });
      }
    });
  });

  describe(`the service's worker (${backend})`, () => {
    let h: Harness;
    let media: TestMedia;
    before(async () => {
      [h, media] = await Promise.all([
        startHarness(
          backend,
          { WORKER_POLL_INTERVAL: '100', UPLOAD_SWEEP_INTERVAL: '1', UPLOAD_EXPIRY_GRACE: '0' },
          { worker: true },
        ),
        makeTestMedia(['stereo.wav']),
      ]);
    });
    after(async () => {
      await h.close();
      await media.remove();
    });

    async function status(key: string, uploadId: number): Promise<string> {
      const res = await h.request({ method: 'GET', url: `/api/v1/upload/${uploadId}`, key });
      return res.json().status;
    }

    it('verifies an upload in the background, never in the request', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c);
      const res = await h.app.inject({
        method: 'PUT',
        url: pathOf(upload.upload_url),
        headers: { 'content-type': 'audio/wav' },
        payload: await readFile(media.path('stereo.wav')),
      });
      assert.equal(res.statusCode, 200);
      const waited = await until(async () => (await status(c.key, upload.upload_id)) === 'ready');
      console.log(`upload ready ${waited} ms after the PUT answered`);
    });

    it('expires an unused upload URL through the periodic sweep', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c, { expiresIn: 1 });
      assert.equal(await status(c.key, upload.upload_id), 'pending');
      await until(async () => (await status(c.key, upload.upload_id)) === 'expired', 8000);
    });
  });
}
