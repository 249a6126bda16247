/**
 * A call's analysis follows what the call has (decision 28). Its roles come from its channels
 * (`speaker.separation` and `channel_map`), so a create that changes them for a call with a ready
 * recording analyses that recording again with the new roles; a create that sends the same speaker, or
 * changes it on a call with no ready recording, leaves the analysis as it was. And a recording whose bytes
 * are replaced by rejected ones (a second PUT to its URL) no longer describes the call: the analysis is made
 * again from the call's latest ready recording, else its client's transcript, else it fails saying so. The
 * recording is espeak-ng speech placed at known times on each channel (scripts/analysis-set.ts).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { and, eq, sql } from 'drizzle-orm';
import { makeLabelledCall } from '../scripts/analysis-set.ts';
import { callAnalyses, events, jobs } from '../src/adapters/db/schema.ts';
import { ANALYZE_CALL_JOB } from '../src/domain/analysis/analysis.ts';
import { conversationOf, createCallWithRecording, post, putUpload } from './helpers/calls.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

let dir: string;
let stereoPath: string;
let shorterPath: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cqs-speaker-change-'));
  const call = makeLabelledCall({ dir, name: 'call', seed: 11, turns: 6, snrDb: 30 });
  stereoPath = join(dir, 'short.wav');
  execFileSync('sox', [call.path, stereoPath, 'trim', '0', '12']);
  shorterPath = join(dir, 'shorter.wav');
  execFileSync('sox', [call.path, shorterPath, 'trim', '0', '6']);
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Analysis = {
  status: string;
  reason: string | null;
  source: string;
  talk_s: { agent: number | null; customer: number | null; unknown: number | null } | null;
  talk_ratio_agent: number | null;
};

for (const backend of BACKENDS) {
  describe(`the analysis follows the call (${backend})`, () => {
    let h: Harness;
    let c: TestCompany;
    let reader: { key: string };
    before(async () => {
      h = await startHarness(backend);
      c = await h.company();
      reader = await c.addKey(c.admin.id, ['calls:read']);
    });
    after(() => h.close());

    /** call/create of the company's agent and product, with `body`. */
    async function create(body: Record<string, unknown>) {
      const res = await post(h, c, '/api/v1/call/create', {
        agent_email: c.agent.email,
        product_id: c.productId,
        ...body,
      });
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as { upload_url?: string; upload_content_type?: string };
    }

    const put = (created: { upload_url?: string; upload_content_type?: string }, bytes: Buffer) =>
      putUpload(h, created, bytes);

    /** A call of the stereo recording, uploaded and analysed; its id. */
    async function recordedCall(conversationId: string, speaker?: Record<string, unknown>) {
      const call = { conversationId, filename: 'call.wav', contentType: 'audio/wav' };
      await createCallWithRecording(h, c, speaker ? { ...call, speaker } : call, await readFile(stereoPath));
      await h.runJobs();
      return (await conversationOf(h, c, conversationId)).id;
    }

    async function analysis(id: string): Promise<Analysis> {
      const res = await h.request({ method: 'GET', url: `/api/v1/calls/${id}`, key: reader.key });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().analysis as Analysis;
    }

    async function runOf(id: string) {
      const [row] = await h.services.database.db
        .select({ runId: callAnalyses.runId })
        .from(callAnalyses)
        .where(and(eq(callAnalyses.companyId, c.id), eq(callAnalyses.conversationUuid, id)));
      return row?.runId;
    }

    async function readyEvents(id: string) {
      const rows = await h.services.database.db
        .select({ id: events.id })
        .from(events)
        .where(
          and(
            eq(events.companyId, c.id),
            eq(events.type, 'analysis.ready'),
            sql`${events.data}->>'call_id' = ${id}`,
          ),
        );
      return rows.length;
    }

    async function queuedAnalyses() {
      const rows = await h.services.database.db
        .select({ id: jobs.id })
        .from(jobs)
        .where(and(eq(jobs.companyId, c.id), eq(jobs.kind, ANALYZE_CALL_JOB)));
      return rows.length;
    }

    it('swaps the roles of the figures when the channel map is swapped', async () => {
      const conversation_id = `swapped-${backend}`;
      const id = await recordedCall(conversation_id, {
        separation: 'channels',
        channel_map: ['agent', 'customer'],
      });
      const first = await analysis(id);
      assert.equal(first.status, 'ready', first.reason ?? '');
      const { agent, customer } = first.talk_s ?? {};
      assert.ok((agent ?? 0) > 1 && (customer ?? 0) > 1 && agent !== customer, JSON.stringify(first.talk_s));

      await create({
        conversation_id,
        speaker: { separation: 'channels', channel_map: ['customer', 'agent'] },
      });
      const pending = await analysis(id);
      assert.equal(pending.status, 'pending');
      assert.equal(pending.source, 'recording');
      await h.runJobs();
      const second = await analysis(id);
      assert.equal(second.status, 'ready', second.reason ?? '');
      assert.deepEqual(second.talk_s, { agent: customer, customer: agent, unknown: 0 });
      assert.equal(await readyEvents(id), 2, 'each run wrote its analysis.ready');
    });

    it('gives a recording analysed as one mix its roles once the call says its channels are the parties', async () => {
      const conversation_id = `separated-${backend}`;
      const id = await recordedCall(conversation_id);
      const mixed = await analysis(id);
      assert.equal(mixed.status, 'ready', mixed.reason ?? '');
      assert.equal(mixed.talk_s?.agent, null);
      assert.ok((mixed.talk_s?.unknown ?? 0) > 1);

      await create({ conversation_id, channels: ['agent', 'customer'] });
      await h.runJobs();
      const split = await analysis(id);
      assert.equal(split.status, 'ready', split.reason ?? '');
      assert.ok(
        (split.talk_s?.agent ?? 0) > 1 && (split.talk_s?.customer ?? 0) > 1,
        JSON.stringify(split.talk_s),
      );
      assert.equal(split.talk_s?.unknown, 0);
      assert.notEqual(split.talk_ratio_agent, null);
    });

    it('leaves the analysis alone when a create sends the speaker the call has, or none', async () => {
      const conversation_id = `same-${backend}`;
      const speaker = { separation: 'channels', channel_map: ['agent', 'customer'] };
      const id = await recordedCall(conversation_id, speaker);
      const run = await runOf(id);
      const figures = await analysis(id);
      await create({ conversation_id, speaker });
      await create({ conversation_id, tags: [{ key: 'k', type: 'string', value: 'v' }] });
      assert.equal(await queuedAnalyses(), 0, 'no run was queued');
      assert.equal(await runOf(id), run);
      assert.deepEqual(await analysis(id), figures);
      assert.equal(await readyEvents(id), 1);
    });

    it('leaves a transcript analysis alone: the transcript says who spoke', async () => {
      const conversation_id = `told-${backend}`;
      await create({
        conversation_id,
        transcript: [
          { role: 'agent', text: 'hello', start: 0, stop: 3 },
          { role: 'customer', text: 'hi', start: 4, stop: 5 },
        ],
      });
      await h.runJobs();
      const { id } = await conversationOf(h, c, conversation_id);
      const run = await runOf(id);
      await create({
        conversation_id,
        speaker: { separation: 'channels', channel_map: ['customer', 'agent'] },
      });
      assert.equal(await queuedAnalyses(), 0);
      assert.equal(await runOf(id), run);
      const told = await analysis(id);
      assert.equal(told.source, 'transcript');
      assert.deepEqual(told.talk_s, { agent: 3, customer: 1, unknown: 0 });
    });

    const NOT_AUDIO = Buffer.from('these bytes are not a recording\n');
    const RECORDING = { filename: 'call.wav', content_type: 'audio/wav' };
    const SPEAKER = { separation: 'channels', channel_map: ['agent', 'customer'] };

    it('fails, saying so, the analysis of a recording whose bytes were replaced by rejected ones', async () => {
      const conversation_id = `replaced-${backend}`;
      const created = await create({ conversation_id, ...RECORDING, speaker: SPEAKER });
      await put(created, await readFile(stereoPath));
      await h.runJobs();
      const { id } = await conversationOf(h, c, conversation_id);
      assert.equal((await analysis(id)).status, 'ready');

      await put(created, NOT_AUDIO);
      await h.runJobs();
      const gone = await analysis(id);
      assert.equal(gone.status, 'failed');
      assert.match(gone.reason ?? '', /no longer ready/);
      assert.equal(gone.talk_s, null);
      const recording = await h.request({
        method: 'GET',
        url: `/api/v1/calls/${id}/recording`,
        key: reader.key,
      });
      assert.equal(recording.statusCode, 404, 'no recording is played either');
    });

    it("analyses the call's other ready recording when the newer one is replaced by rejected bytes", async () => {
      const conversation_id = `older-${backend}`;
      await put(
        await create({ conversation_id, ...RECORDING, speaker: SPEAKER }),
        await readFile(stereoPath),
      );
      await h.runJobs();
      const { id } = await conversationOf(h, c, conversation_id);
      const older = await analysis(id);
      const newer = await create({ conversation_id, ...RECORDING });
      await put(newer, await readFile(shorterPath));
      await h.runJobs();
      assert.notDeepEqual(await analysis(id), older, 'the newer recording was analysed');
      await put(newer, NOT_AUDIO);
      await h.runJobs();
      assert.deepEqual(await analysis(id), older);
    });

    it("analyses the client's transcript when the call's only recording is replaced by rejected bytes", async () => {
      const conversation_id = `transcribed-${backend}`;
      const transcript = [
        { role: 'agent', text: 'hello', start: 0, stop: 2 },
        { role: 'customer', text: 'hi', start: 3, stop: 4 },
      ];
      const created = await create({ conversation_id, ...RECORDING, speaker: SPEAKER, transcript });
      await put(created, await readFile(stereoPath));
      await h.runJobs();
      const { id } = await conversationOf(h, c, conversation_id);
      assert.equal((await analysis(id)).source, 'recording', 'the recording wins while it is ready');
      await put(created, NOT_AUDIO);
      await h.runJobs();
      const told = await analysis(id);
      assert.equal(told.status, 'ready', told.reason ?? '');
      assert.equal(told.source, 'transcript');
      assert.deepEqual(told.talk_s, { agent: 2, customer: 1, unknown: 0 });
    });

    it('leaves the analysis alone when a newer upload is rejected', async () => {
      const conversation_id = `kept-${backend}`;
      const id = await recordedCall(conversation_id, SPEAKER);
      const run = await runOf(id);
      await put(await create({ conversation_id, ...RECORDING }), NOT_AUDIO);
      await h.runJobs();
      assert.equal(await runOf(id), run);
      assert.equal((await analysis(id)).status, 'ready');
    });
  });
}
