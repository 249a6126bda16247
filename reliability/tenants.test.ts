/**
 * Tenant isolation matrix: every endpoint, called with ids and emails of another company (and a product not
 * granted to the caller, and an upload URL signed for another object), answers 404 or 403 and changes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { footprint, tagsOf, uploadsOf } from '../test/helpers/calls.ts';
import { BACKENDS, type Harness, startHarness } from '../test/helpers/harness.ts';
import { figure } from './lib.ts';

for (const backend of BACKENDS) {
  describe(`tenant isolation matrix (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    it('gives 404 or 403 for every id of another company and changes nothing', async () => {
      const a = await h.company();
      const b = await h.company();
      const req = (method: string, url: string, key: string, body?: unknown) =>
        h.request({ method, url, key, ...(body !== undefined ? { body } : {}) });
      // Company B: a call with tags and an upload, and a handoff record.
      const bCreate = await req('POST', '/api/v1/call/create', b.key, {
        agent_email: b.agent.email,
        product_id: b.productId,
        conversation_id: 'b-1',
        filename: 'b.wav',
        content_type: 'audio/wav',
        tags: [{ key: 'secret', type: 'string', value: 'b' }],
      });
      assert.equal(bCreate.statusCode, 200, bCreate.body);
      const bUpload = bCreate.json() as { upload_id: number; upload_url: string };
      const bHandoff = (await req('POST', '/api/v1/call-handoff', b.writerKey, { metadata: { s: 1 } })).json()
        .handoff_id as string;
      // Company A: a call with an upload, and a product not granted to A's agent.
      const aCreate = await req('POST', '/api/v1/call/create', a.key, {
        agent_email: a.agent.email,
        product_id: a.productId,
        conversation_id: 'a-1',
        filename: 'a.wav',
        content_type: 'audio/wav',
      });
      const aUpload = aCreate.json() as { upload_url: string };
      const ungranted = await a.addProduct();

      const snapshot = async () => {
        const fp = await footprint(h, b);
        const ups = await uploadsOf(h, b);
        const handoff = (await req('GET', `/api/v1/call-handoff/${bHandoff}`, b.key)).body;
        const convTags = ups[0] ? await tagsOf(h, b, ups[0].conversationUuid) : {};
        return JSON.stringify({ fp, ups: ups.map((u) => [u.id, u.status]), handoff, convTags });
      };
      // Keys of the read side: B's to find its call id, A's admin (every scope) to try it.
      const readScopes = ['calls:read', 'calls:delete'];
      const bRead = (await b.addKey(b.admin.id, readScopes)).key;
      const aRead = (await a.addKey(a.admin.id, readScopes)).key;
      const bCallId = (await req('GET', '/api/v1/calls?conversation_id=b-1', bRead)).json().calls[0]
        ?.id as string;
      assert.ok(bCallId, "B's call is listed for B");
      const before = await snapshot();
      const bEmail = b.agent.email;
      const cases: [string, string, string, unknown][] = [
        [
          'POST',
          '/api/v1/call/create',
          a.key,
          { agent_email: bEmail, product_id: a.productId, conversation_id: 'b-1' },
        ],
        [
          'POST',
          '/api/v1/call/create',
          a.key,
          { agent_email: a.agent.email, product_id: b.productId, conversation_id: 'x' },
        ],
        [
          'POST',
          '/api/v1/call/create',
          a.agentKey,
          { agent_email: a.agent.email, product_id: ungranted, conversation_id: 'y' },
        ],
        [
          'POST',
          '/api/v1/call/add_tags',
          a.key,
          {
            conversation_id: 'b-1',
            agent_email: bEmail,
            tags: [{ key: 'secret', type: 'string', value: 'a' }],
          },
        ],
        [
          'POST',
          '/api/v1/call/add_tags',
          a.key,
          {
            conversation_id: 'b-1',
            agent_email: a.agent.email,
            tags: [{ key: 'k', type: 'string', value: 'a' }],
          },
        ],
        ['POST', '/api/v1/call/start', a.key, { conversation_id: 'b-1', agent_email: bEmail }],
        ['POST', '/api/v1/call/stop', a.key, { conversation_id: 'b-1', agent_email: bEmail }],
        [
          'POST',
          '/api/v1/call/start',
          a.key,
          { conversation_id: 'z', agent_email: a.agent.email, product_id: b.productId },
        ],
        ['POST', '/api/v1/live/b-1/data/sale', a.key, { closed: true }],
        ['POST', '/api/v1/live/b-1/data/customer', a.key, { account_id: 'A' }],
        ['GET', `/api/v1/call-handoff/${bHandoff}`, a.key, undefined],
        ['PATCH', `/api/v1/call-handoff/${bHandoff}`, a.writerKey, { metadata: { s: 2 } }],
        ['POST', `/api/v1/call-handoff/${bHandoff}/finalize`, a.writerKey, { metadata: { s: 3 } }],
        ['GET', `/api/v1/upload/${bUpload.upload_id}`, a.key, undefined],
        ['GET', `/api/v1/calls/${bCallId}`, aRead, undefined],
        ['DELETE', `/api/v1/calls/${bCallId}`, aRead, undefined],
        ['POST', `/api/v1/calls/${bCallId}/transcribe`, a.key, undefined],
      ];
      let leaks = 0;
      const wrong: string[] = [];
      for (const [method, url, key, body] of cases) {
        const res = await req(method, url, key, body);
        if (res.statusCode !== 404 && res.statusCode !== 403) {
          wrong.push(
            `${method} ${url} ${JSON.stringify(body)} → ${res.statusCode} ${res.body.slice(0, 200)}`,
          );
          if (res.statusCode < 300) leaks++;
        }
      }
      // An upload URL signed for A's object, pointed at B's object (and the reverse query on A's path).
      const aUrl = new URL(aUpload.upload_url);
      const bUrl = new URL(bUpload.upload_url);
      for (const forged of [`${bUrl.pathname}${aUrl.search}`, `${aUrl.pathname}${bUrl.search}`]) {
        const res = await h.request({
          method: 'PUT',
          url: forged,
          headers: { 'content-type': 'audio/wav' },
          body: Buffer.from('RIFF0000WAVE'),
        });
        if (res.statusCode !== 403 && res.statusCode !== 404) {
          wrong.push(`PUT forged ${forged} → ${res.statusCode}`);
          if (res.statusCode < 300) leaks++;
        }
      }
      // The list answers 200 but never shows another company's call, whatever the filter.
      for (const query of [
        '',
        '?conversation_id=b-1',
        `?agent_email=${encodeURIComponent(bEmail)}`,
        `?product_id=${b.productId}`,
        '?tag=secret',
      ]) {
        const res = await req('GET', `/api/v1/calls${query}`, aRead);
        const shown = res.statusCode === 200 ? (res.json().calls as { id: string }[]) : [];
        if (shown.some((c) => c.id === bCallId) || (query !== '' && shown.length > 0)) {
          wrong.push(`GET /api/v1/calls${query} → shows B's call`);
          leaks++;
        }
      }
      const changed = (await snapshot()) !== before;
      if (changed) leaks++;
      figure(`tenant_${backend}_requests`, cases.length + 2);
      figure(`tenant_${backend}_leaks`, leaks);
      figure(`tenant_${backend}_answers_other_than_403_404`, wrong.length);
      for (const w of wrong) console.log(`  not 403/404: ${w}`);
      assert.equal(leaks, 0);
    });
  });
}
