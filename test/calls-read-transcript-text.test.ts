/**
 * A call's transcript, metadata and analysis figures are written into GET /api/v1/calls/{id} as the
 * database's JSON text (not parsed and serialized again): whatever the segments hold, the answer parses to
 * what was sent, metadata named like those fields stays apart, and the rest of the answer is the route's
 * serializer's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { analysisOf } from '../src/domain/analysis/analysis.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, runBehindTheService, startHarness } from './helpers/harness.ts';
import { get, makeCall, type ReadKeys, readKeys } from './helpers/reads.ts';

for (const backend of BACKENDS) {
  describe(`a call's transcript as stored text (${backend})`, () => {
    let h: Harness;
    let c: TestCompany;
    let keys: ReadKeys;
    before(async () => {
      h = await startHarness(backend);
      c = await h.company();
      keys = await readKeys(c);
    });
    after(() => h.close());

    it('answers every character and number as sent, and metadata named like the field apart', async () => {
      const transcript = [
        { role: 'agent', text: 'Quotes " and \\ backslash, a newline\nand a tab\t', start: 0, stop: 1.25 },
        {
          role: 'customer',
          text: 'Ünïcödé, emoji 📞, line separator \u2028, "transcript":null',
          start: 1.25,
          stop: 7,
        },
        { role: 'agent', text: '', start: 1e-7, stop: 123456.789 },
      ];
      const { id } = await makeCall(h, c, keys, { conversationId: 'text-1', transcript });
      const start = await h.request({
        method: 'POST',
        url: '/api/v1/call/start',
        key: c.key,
        body: { agent_email: c.agent.email, conversation_id: 'text-1', metadata: { a: 1, transcript: null } },
      });
      assert.equal(start.statusCode, 200, start.body);
      const res = await get(h, `/api/v1/calls/${id}`, keys.admin);
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const call = res.json();
      assert.deepEqual(call.transcript, transcript);
      assert.equal(call.transcript_source, 'client');
      assert.deepEqual(call.metadata, { a: 1, transcript: null });
      assert.equal(call.id, id);
    });

    it('answers a transcript of over 128 kB whole, in bytes as many as it declares', async () => {
      // Over V8's large-object size as text; every segment mixes one- to four-byte characters and escapes.
      const transcript = Array.from({ length: 2500 }, (_, i) => ({
        role: i % 2 === 0 ? 'agent' : 'customer',
        text: `${i}: ç€📞 "quoted" \\ ${'é'.repeat(i % 7)}${'x'.repeat(i % 13)} ☎️ a sentence of some length`,
        start: i * 3,
        stop: i * 3 + 2.5,
      }));
      const { id } = await makeCall(h, c, keys, { conversationId: 'text-3', transcript });
      const res = await get(h, `/api/v1/calls/${id}`, keys.admin);
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(res.rawPayload.length > 256 * 1024, `${res.rawPayload.length} bytes`);
      assert.equal(Number(res.headers['content-length']), res.rawPayload.length);
      const call = res.json();
      assert.deepEqual(call.transcript, transcript);
      assert.equal(call.transcript_source, 'client');
      assert.deepEqual(call.metadata, {});
    });

    it('answers the analysis with its figures as stored, in jsonb spacing (stored before 0020) too', async () => {
      const transcript = [
        { role: 'agent', text: 'Hello.', start: 0, stop: 2.5 },
        { role: 'customer', text: 'Hi.', start: 2, stop: 4 },
        { role: 'agent', text: 'So.', start: 5.25, stop: 6.5 },
      ];
      const { id } = await makeCall(h, c, keys, { conversationId: 'text-4', transcript });
      const metadata = { analysis: null, metadata: { analysis: null }, q: '{"analysis":null}' };
      const start = await h.request({
        method: 'POST',
        url: '/api/v1/call/start',
        key: c.key,
        body: { agent_email: c.agent.email, conversation_id: 'text-4', metadata },
      });
      assert.equal(start.statusCode, 200, start.body);
      await h.runJobs();
      const expected = await analysisOf(h.services.database.db, c.id, id);
      assert.equal(expected?.status, 'ready', expected?.reason ?? '');
      assert.deepEqual(expected?.talk_s, { agent: 3.75, customer: 2, unknown: 0 });
      const read = async () => {
        const res = await get(h, `/api/v1/calls/${id}`, keys.admin);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(Number(res.headers['content-length']), res.rawPayload.length);
        return res.json();
      };
      const call = await read();
      assert.deepEqual(call.analysis, expected);
      assert.deepEqual(call.metadata, metadata);
      assert.deepEqual(call.transcript, transcript);
      await runBehindTheService(
        h,
        `update call_analyses set figures = figures::jsonb::json where conversation_uuid = '${id}'`,
      );
      assert.deepEqual((await read()).analysis, expected);
    });

    /** GET one call's analysis equals `analysisOf`'s, and only the members named are not null. */
    async function assertAnalysisRead(id: string, status: string, notNull: [string, unknown][]) {
      const expected = await analysisOf(h.services.database.db, c.id, id);
      assert.equal(expected?.status, status);
      const res = await get(h, `/api/v1/calls/${id}`, keys.admin);
      assert.equal(res.statusCode, 200, res.body);
      const { analysis } = res.json();
      assert.deepEqual(analysis, expected);
      assert.deepEqual(
        Object.entries(analysis).filter(([, v]) => v !== null),
        notNull,
      );
    }

    it('answers an analysis not made yet with its status and every figure null (decision 28)', async () => {
      const transcript = [{ role: 'agent', text: 'Hello.', start: 0, stop: 2.5 }];
      const { id } = await makeCall(h, c, keys, { conversationId: 'text-5', transcript });
      await assertAnalysisRead(id, 'pending', [
        ['status', 'pending'],
        ['source', 'transcript'],
      ]);
    });

    it('answers a failed analysis with its reason and every figure null (decision 28)', async () => {
      const transcript = [{ role: 'agent', text: 'Hello.', start: 0, stop: 2.5 }];
      const { id } = await makeCall(h, c, keys, { conversationId: 'text-6', transcript });
      // As the worker leaves a run it could not finish; figures a failed run never has are ignored.
      await runBehindTheService(
        h,
        `update call_analyses set status = 'failed', reason = 'could not be decoded', figures = '{"duration_s": 9}'
           where conversation_uuid = '${id}'`,
      );
      await assertAnalysisRead(id, 'failed', [
        ['status', 'failed'],
        ['reason', 'could not be decoded'],
        ['source', 'transcript'],
      ]);
    });

    it('answers null for a call without a transcript', async () => {
      const { id } = await makeCall(h, c, keys, { conversationId: 'text-2' });
      const call = (await get(h, `/api/v1/calls/${id}`, keys.admin)).json();
      assert.equal(call.transcript, null);
      assert.equal(call.transcript_source, null);
    });
  });
}
