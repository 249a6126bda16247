/**
 * What a call's analysis is of is chosen by each thing that changes what the call has: a verdict on an
 * upload (ready, or rejected bytes over a ready recording), a create that changes the speaker, a create
 * that sends a transcript. Two of them at once on one call must not choose from what they saw before the
 * other committed: the one that commits last would then overwrite the other's run with a stale choice.
 *
 * NOT_LATEST: the verified upload is never the call's newest. A verdict on the newest updates the call's
 * row (its latest upload's status, migration 0004), whose lock already made the other change wait.
 *
 * Each test holds a verification's transaction open at the moment it queues its analysis (its run is
 * written, not committed), starts the other change, waits until PostgreSQL shows it waiting for that
 * transaction, and lets the verification commit. PostgreSQL only: PGlite has one connection, on which
 * transactions cannot overlap.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { and, eq, sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { makeLabelledCall } from '../scripts/analysis-set.ts';
import type { Db } from '../src/adapters/db/database.ts';
import { callAnalyses } from '../src/adapters/db/schema.ts';
import { createMediaInfoProber, type MediaProber } from '../src/adapters/probe/mediainfo.ts';
import type { JobQueue, NewJob } from '../src/adapters/queue/queue.ts';
import { ANALYZE_CALL_JOB } from '../src/domain/analysis/analysis.ts';
import { verifyUpload } from '../src/domain/uploads/verification.ts';
import { conversationOf, post, putUpload } from './helpers/calls.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { type Harness, startHarness } from './helpers/harness.ts';
import { pollUntil } from './helpers/poll.ts';

const RECORDING = { filename: 'call.wav', content_type: 'audio/wav' };
const SPEAKER = { separation: 'channels', channel_map: ['agent', 'customer'] };
const NOT_AUDIO = Buffer.from('these bytes are not a recording\n');

describe('concurrent changes of what a call has (PostgreSQL)', {
  skip: !process.env.TEST_DATABASE_URL,
}, () => {
  let dir: string;
  let longer: Buffer;
  let shorter: Buffer;
  let h: Harness;
  let c: TestCompany;
  let reader: { key: string };
  let prober: MediaProber;
  let watcher: pg.Client;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cqs-run-races-'));
    const call = makeLabelledCall({ dir, name: 'call', seed: 11, turns: 6, snrDb: 30 });
    execFileSync('sox', [call.path, join(dir, 'longer.wav'), 'trim', '0', '12']);
    execFileSync('sox', [call.path, join(dir, 'shorter.wav'), 'trim', '0', '6']);
    longer = await readFile(join(dir, 'longer.wav'));
    shorter = await readFile(join(dir, 'shorter.wav'));
    h = await startHarness('postgres');
    c = await h.company();
    reader = await c.addKey(c.admin.id, ['calls:read']);
    prober = createMediaInfoProber();
    watcher = new pg.Client({ connectionString: h.databaseUrl });
    await watcher.connect();
  });
  after(async () => {
    await watcher?.end();
    prober?.close();
    await h?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function create(body: Record<string, unknown>): Promise<LightMyRequestResponse> {
    return post(h, c, '/api/v1/call/create', {
      agent_email: c.agent.email,
      product_id: c.productId,
      ...body,
    });
  }

  async function created(body: Record<string, unknown>) {
    const res = await create(body);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { upload_url: string; upload_content_type: string; upload_id: number };
  }

  async function analysis(id: string) {
    const res = await h.request({ method: 'GET', url: `/api/v1/calls/${id}`, key: reader.key });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().analysis as {
      status: string;
      reason: string | null;
      source: string;
      duration_s: number;
    };
  }

  /** The upload the call's analysis run is of (null: its transcript). */
  async function analysedUpload(id: string) {
    const [row] = await h.services.database.db
      .select({ uploadId: callAnalyses.uploadId })
      .from(callAnalyses)
      .where(and(eq(callAnalyses.companyId, c.id), eq(callAnalyses.conversationUuid, id)));
    return row?.uploadId;
  }

  /** A call with the 12 s recording uploaded and analysed, then the 6 s one sent and not yet verified. */
  async function analysedThenSent(conversation_id: string) {
    const first = await created({ conversation_id, ...RECORDING, speaker: SPEAKER });
    await putUpload(h, first, longer);
    await h.runJobs();
    const { id } = await conversationOf(h, c, conversation_id);
    const second = await created({ conversation_id, ...RECORDING });
    await putUpload(h, second, shorter);
    return { first, id, second };
  }

  /**
   * Verifies `uploadId` with its transaction held open where it queues the analysis; `during` runs then and
   * is awaited until PostgreSQL shows it waiting for that transaction. Answers what `during` answered.
   */
  async function verifyHeldOpenDuring<T>(uploadId: number, during: () => Promise<T>): Promise<T> {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let held!: (pid: number) => void;
    const holding = new Promise<number>((resolve) => {
      held = resolve;
    });
    const queue: JobQueue = Object.assign(Object.create(h.services.queue) as JobQueue, {
      async enqueue(db: Db, job: NewJob) {
        if (job.kind === ANALYZE_CALL_JOB) {
          const result = (await db.execute(sql`select pg_backend_pid() as pid`)) as {
            rows: { pid: number }[];
          };
          held(Number(result.rows[0]?.pid));
          await gate;
        }
        return h.services.queue.enqueue(db, job);
      },
    });
    const verified = verifyUpload(
      { db: h.services.database.db, storage: h.services.storage, prober, queue, lateUploadGraceSeconds: 60 },
      c.id,
      uploadId,
    );
    const pid = await holding;
    const other = during();
    try {
      const waiting = async () =>
        (
          await watcher.query<{ n: number }>(
            'select count(*)::int as n from pg_stat_activity where $1::int = any(pg_blocking_pids(pid))',
            [pid],
          )
        ).rows[0]?.n ?? 0;
      await pollUntil(waiting, (n) => n > 0, {
        timeoutMs: 20_000,
        everyMs: 20,
        what: () => 'the other change never waited for the verification',
      });
    } finally {
      release();
    }
    assert.equal(await verified, 'ready');
    return other;
  }

  it('keeps the new recording analysed when the bytes of the one analysed are rejected at the same time', async () => {
    const conversation_id = 'rejected-meanwhile';
    const { first, id, second } = await analysedThenSent(conversation_id);
    assert.equal(await analysedUpload(id), first.upload_id);
    await putUpload(h, first, NOT_AUDIO);
    const services = { db: h.services.database.db, storage: h.services.storage, prober };
    const rejected = await verifyHeldOpenDuring(second.upload_id, () =>
      verifyUpload(
        { ...services, queue: h.services.queue, lateUploadGraceSeconds: 60 },
        c.id,
        first.upload_id,
      ),
    );
    assert.equal(rejected, 'rejected');
    await h.runJobs();
    assert.equal(await analysedUpload(id), second.upload_id);
    const now = await analysis(id);
    assert.equal(now.status, 'ready', now.reason ?? '');
    assert.ok(Math.abs(now.duration_s - 6) < 0.5, `the 6 s recording, not ${now.duration_s} s`);
  });

  it('analyses the recording that became ready while a create changed the channel map', async () => {
    const conversation_id = 'remapped-meanwhile';
    const { id, second } = await analysedThenSent(conversation_id);
    await created({ conversation_id, ...RECORDING }); // a newer upload, never sent (see NOT_LATEST)
    const remapped = await verifyHeldOpenDuring(second.upload_id, () =>
      create({ conversation_id, speaker: { separation: 'channels', channel_map: ['customer', 'agent'] } }),
    );
    assert.equal(remapped.statusCode, 200, remapped.body);
    await h.runJobs();
    assert.equal(await analysedUpload(id), second.upload_id, 'the latest ready recording');
    const now = await analysis(id);
    assert.equal(now.status, 'ready', now.reason ?? '');
    assert.ok(Math.abs(now.duration_s - 6) < 0.5, `the 6 s recording, not ${now.duration_s} s`);
  });

  it("analyses the recording that became ready while a create sent the call's transcript", async () => {
    const conversation_id = 'told-meanwhile';
    const first = await created({ conversation_id, ...RECORDING, speaker: SPEAKER });
    await putUpload(h, first, shorter);
    await created({ conversation_id, ...RECORDING }); // a newer upload, never sent (see NOT_LATEST)
    const { id } = await conversationOf(h, c, conversation_id);
    const told = await verifyHeldOpenDuring(first.upload_id, () =>
      create({
        conversation_id,
        transcript: [
          { role: 'agent', text: 'hello', start: 0, stop: 2 },
          { role: 'customer', text: 'hi', start: 3, stop: 4 },
        ],
      }),
    );
    assert.equal(told.statusCode, 200, told.body);
    await h.runJobs();
    const now = await analysis(id);
    assert.equal(now.status, 'ready', now.reason ?? '');
    assert.equal(now.source, 'recording', 'a ready recording wins over the transcript');
    assert.equal(await analysedUpload(id), first.upload_id);
  });
});
