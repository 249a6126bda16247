/** The count limits of call/create and call/add_tags: transcript segments and tags per request. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_TRANSCRIPT_SEGMENTS } from '../src/http/schemas/calls/create.ts';
import { MAX_TAGS_PER_REQUEST } from '../src/http/schemas/calls/shared.ts';
import { footprint, NOTHING, post } from './helpers/calls.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

const tags = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ key: `k${i}`, type: 'integer', value: i }));
const segments = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ role: 'agent', text: 'x', start: i, stop: i + 1 }));

for (const backend of BACKENDS) {
  describe(`count limits of call/create and call/add_tags (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    it('accepts exactly the limits', async () => {
      const c = await h.company();
      const base = { agent_email: c.agent.email, product_id: c.productId, conversation_id: 'lim-1' };
      const res = await post(h, c, '/api/v1/call/create', {
        ...base,
        transcript: segments(MAX_TRANSCRIPT_SEGMENTS),
        tags: tags(MAX_TAGS_PER_REQUEST),
      });
      assert.equal(res.statusCode, 200, res.body);
      const add = await post(h, c, '/api/v1/call/add_tags', {
        conversation_id: 'lim-1',
        agent_email: c.agent.email,
        tags: tags(MAX_TAGS_PER_REQUEST),
      });
      assert.equal(add.statusCode, 200, add.body);
    });

    it('answers 422 past them and records nothing', async () => {
      const c = await h.company();
      const base = { agent_email: c.agent.email, product_id: c.productId, conversation_id: 'lim-2' };
      const tooLong = await post(h, c, '/api/v1/call/create', {
        ...base,
        transcript: segments(MAX_TRANSCRIPT_SEGMENTS + 1),
      });
      assert.equal(tooLong.statusCode, 422, tooLong.body);
      assert.match(tooLong.json().error, /transcript/);
      const tooMany = await post(h, c, '/api/v1/call/create', {
        ...base,
        tags: tags(MAX_TAGS_PER_REQUEST + 1),
      });
      assert.equal(tooMany.statusCode, 422, tooMany.body);
      assert.match(tooMany.json().error, /tags/);
      assert.deepEqual(await footprint(h, c), NOTHING);
      assert.equal((await post(h, c, '/api/v1/call/create', base)).statusCode, 200);
      const add = await post(h, c, '/api/v1/call/add_tags', {
        conversation_id: 'lim-2',
        agent_email: c.agent.email,
        tags: tags(MAX_TAGS_PER_REQUEST + 1),
      });
      assert.equal(add.statusCode, 422, add.body);
      assert.equal((await footprint(h, c)).tags, 0);
    });
  });
}
