import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { makeTestMedia, pathOf, type TestMedia } from './helpers/media.ts';
import { allPages, get, makeCall, type ReadKeys, readKeys } from './helpers/reads.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const T0 = 1_763_985_600;

for (const backend of BACKENDS) {
  describe(`GET /api/v1/calls and /calls/{id} (${backend})`, () => {
    let h: Harness;
    let media: TestMedia;
    before(async () => {
      h = await startHarness(backend);
      media = await makeTestMedia(['stereo.wav']);
    });
    after(async () => {
      await h.close();
      await media.remove();
    });

    async function company(): Promise<{ c: TestCompany; keys: ReadKeys }> {
      const c = await h.company();
      return { c, keys: await readKeys(c) };
    }
    const ids = (res: { json(): unknown }) =>
      (res.json() as { calls: { id: string }[] }).calls.map((x) => x.id);

    it('needs calls:read (403 with a calls key, 401 without a key) and checks the scope before visibility', async () => {
      const { c, keys } = await company();
      const { id } = await makeCall(h, c, keys, { conversationId: 'scoped' });
      assert.equal((await get(h, '/api/v1/calls', c.key)).statusCode, 403);
      assert.equal((await get(h, `/api/v1/calls/${id}`, c.key)).statusCode, 403);
      // The scope comes first: a key without it gets 403 even for a call that does not exist.
      assert.equal(
        (await get(h, '/api/v1/calls/00000000-0000-4000-8000-000000000000', c.key)).statusCode,
        403,
      );
      assert.equal((await h.request({ method: 'GET', url: '/api/v1/calls' })).statusCode, 401);
      assert.equal((await get(h, '/api/v1/calls', keys.admin)).statusCode, 200);
    });

    it('shows an admin every call of the company and an agent only their own; never another company’s', async () => {
      const { c, keys } = await company();
      const other = await c.addUser(`other-${Date.now()}@example.test`);
      const mine = await makeCall(h, c, keys, { conversationId: 'a-1' });
      const theirs = await makeCall(h, c, keys, { conversationId: 'a-2', agentEmail: other.email });
      const stranger = await company();
      const foreign = await makeCall(h, stranger.c, stranger.keys, { conversationId: 'a-1' });

      assert.deepEqual(
        new Set(ids(await get(h, '/api/v1/calls', keys.admin))),
        new Set([mine.id, theirs.id]),
      );
      assert.deepEqual(ids(await get(h, '/api/v1/calls', keys.agent)), [mine.id]);
      assert.equal((await get(h, `/api/v1/calls/${mine.id}`, keys.agent)).statusCode, 200);
      assert.equal((await get(h, `/api/v1/calls/${theirs.id}`, keys.agent)).statusCode, 404);
      assert.equal((await get(h, `/api/v1/calls/${theirs.id}`, keys.admin)).statusCode, 200);
      assert.equal((await get(h, `/api/v1/calls/${foreign.id}`, keys.admin)).statusCode, 404);
      assert.equal((await get(h, '/api/v1/calls?conversation_id=a-1', keys.admin)).json().calls.length, 1);
      // A filter cannot widen an agent's view.
      const widened = await get(
        h,
        `/api/v1/calls?agent_email=${encodeURIComponent(other.email)}`,
        keys.agent,
      );
      assert.deepEqual(ids(widened), []);
    });

    it('answers 404 for an id that is not a call', async () => {
      const { keys } = await company();
      for (const id of ['00000000-0000-4000-8000-000000000000', 'not-an-id', '1', '%20']) {
        const res = await get(h, `/api/v1/calls/${id}`, keys.admin);
        assert.equal(res.statusCode, 404, id);
        assert.equal(typeof res.json().error, 'string');
      }
    });

    it('lists newest start_time first, ties in one order by id, and pages by cursor without gaps or repeats', async () => {
      const { c, keys } = await company();
      const made: { id: string; start: number }[] = [];
      for (let i = 0; i < 7; i++) {
        // Three calls share one start_time: the tie is broken by id.
        const start = i < 3 ? T0 : T0 + i * 10.5;
        made.push({
          id: (await makeCall(h, c, keys, { conversationId: `p-${i}`, startTime: start })).id,
          start,
        });
      }
      const expected = [...made]
        .sort((a, b) => b.start - a.start || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
        .map((x) => x.id);
      const whole = await get(h, '/api/v1/calls', keys.admin);
      assert.deepEqual(ids(whole), expected);
      assert.equal(whole.json().next_cursor, null);
      for (const limit of [1, 2, 3]) {
        const pages = await allPages(h, `/api/v1/calls?limit=${limit}`, keys.admin);
        assert.deepEqual(
          pages.flat().map((x) => x.id),
          expected,
          `limit ${limit}`,
        );
        assert.ok(pages.every((p) => p.length <= limit));
      }
      // A cursor still works when the filter narrows the list the same way.
      const pages = await allPages(h, `/api/v1/calls?limit=1&start_time_gte=${T0 + 1}`, keys.admin);
      assert.deepEqual(
        pages.flat().map((x) => x.id),
        expected.slice(0, 4),
      );
    });

    it('shows each item with exactly the fields of decision 23', async () => {
      const { c, keys } = await company();
      const { id, upload } = await makeCall(h, c, keys, {
        conversationId: 'shape',
        startTime: T0 + 0.25,
        tags: [
          { key: 'score', type: 'integer', value: 7 },
          { key: 'closed', type: 'boolean', value: true },
          { key: 'account', type: 'string', value: 'A-1' },
        ],
        transcript: [{ role: 'agent', text: 'hello', start: 0, stop: 1 }],
        filename: 'call.wav',
      });
      const item = (await get(h, '/api/v1/calls', keys.admin)).json().calls[0];
      assert.deepEqual(Object.keys(item).sort(), [
        'agent',
        'conversation_id',
        'created_at',
        'has_transcript',
        'id',
        'media',
        'product_id',
        'start_time',
        'state',
        'tags',
        'updated_at',
      ]);
      assert.equal(item.id, id);
      assert.equal(item.conversation_id, 'shape');
      assert.deepEqual(item.agent, { id: c.agent.id, email: c.agent.email });
      assert.equal(item.product_id, c.productId);
      assert.equal(item.start_time, T0 + 0.25);
      assert.equal(item.state, 'created');
      assert.deepEqual(item.tags, [
        { key: 'account', value: 'A-1', type: 'string' },
        { key: 'closed', value: true, type: 'boolean' },
        { key: 'score', value: 7, type: 'integer' },
      ]);
      assert.deepEqual(item.media, {
        upload_id: upload?.upload_id,
        status: 'pending',
        filename: 'call.wav',
        content_type: 'audio/wav',
      });
      assert.equal(item.has_transcript, true);
      assert.match(item.created_at, ISO);
      assert.match(item.updated_at, ISO);
    });

    it('reads one call with speaker, transcript, metadata, every upload as verified, and linked handoff ids', async () => {
      const { c, keys } = await company();
      const transcript = [
        { role: 'agent', text: 'Thanks for calling.', start: 0, stop: 1.5 },
        { role: 'customer', text: 'Hi.', start: 1.5, stop: 2 },
      ];
      const first = await makeCall(h, c, keys, { conversationId: 'one', transcript, filename: 'first.wav' });
      const second = await makeCall(h, c, keys, { conversationId: 'one', filename: 'second.wav' });
      const put = await h.app.inject({
        method: 'PUT',
        url: pathOf(second.upload?.upload_url ?? ''),
        headers: { 'content-type': 'audio/wav' },
        payload: await readFile(media.path('stereo.wav')),
      });
      assert.equal(put.statusCode, 200);
      await h.runJobs();
      const stop = await h.request({
        method: 'POST',
        url: '/api/v1/call/start',
        key: c.key,
        body: { agent_email: c.agent.email, conversation_id: 'one', metadata: { queue: 'billing' } },
      });
      assert.equal(stop.statusCode, 200, stop.body);
      const record = await h.request({
        method: 'POST',
        url: '/api/v1/call-handoff',
        key: c.writerKey,
        body: { conversation_id: 'one', metadata: { a: 1 } },
      });
      assert.equal(record.statusCode, 201, record.body);

      const res = await get(h, `/api/v1/calls/${first.id}`, keys.admin);
      assert.equal(res.statusCode, 200);
      const call = res.json();
      assert.equal(call.id, first.id);
      assert.deepEqual(call.speaker, { separation: 'diarize', channel_map: null });
      assert.deepEqual(call.transcript, transcript);
      assert.equal(call.transcript_source, 'client');
      assert.deepEqual(call.metadata, { queue: 'billing' });
      assert.equal(call.state, 'live');
      assert.deepEqual(call.handoff_ids, [record.json().handoff_id]);
      // The ready recording wins over the transcript (decision 28); its figures are issue 14's tests.
      assert.equal(call.analysis.status, 'ready', call.analysis.reason);
      assert.equal(call.analysis.source, 'recording');
      assert.equal(typeof call.analysis.silence_s, 'number');
      assert.deepEqual(
        call.uploads.map((u: { upload_id: number }) => u.upload_id),
        [second.upload?.upload_id, first.upload?.upload_id],
      );
      const [ready, pending] = call.uploads;
      assert.equal(ready.status, 'ready');
      assert.equal(ready.reason, null);
      assert.equal(ready.filename, 'second.wav');
      assert.equal(ready.content_type, 'audio/wav');
      assert.equal(ready.size, (await readFile(media.path('stereo.wav'))).length);
      assert.equal(ready.channels, 2);
      assert.ok(Math.abs(ready.duration_s - 1) < 0.1, String(ready.duration_s));
      assert.match(ready.created_at, ISO);
      assert.deepEqual(
        {
          status: pending.status,
          size: pending.size,
          duration_s: pending.duration_s,
          channels: pending.channels,
        },
        { status: 'pending', size: null, duration_s: null, channels: null },
      );
      // The list's media is the latest upload.
      assert.equal(call.media.upload_id, second.upload?.upload_id);
      assert.equal(call.media.status, 'ready');
    });

    it('shows no transcript, empty metadata and no uploads as null, {} and []', async () => {
      const { c, keys } = await company();
      const { id } = await makeCall(h, c, keys, { conversationId: 'bare' });
      const call = (await get(h, `/api/v1/calls/${id}`, keys.admin)).json();
      assert.equal(call.transcript, null);
      assert.equal(call.transcript_source, null);
      assert.equal(call.has_transcript, false);
      assert.deepEqual(call.metadata, {});
      assert.deepEqual(call.uploads, []);
      assert.equal(call.media, null);
      assert.deepEqual(call.tags, []);
      assert.deepEqual(call.handoff_ids, []);
    });
  });
}
