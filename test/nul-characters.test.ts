/** Regression (found by the fuzzer): a NUL character (\u0000) or a lone surrogate in stored text is a 422, never a 500. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

for (const backend of BACKENDS) {
  describe(`NUL characters in input (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    it('answers 422 with a JSON error wherever text is stored', async () => {
      const c = await h.company();
      const base = { agent_email: c.agent.email, product_id: c.productId };
      const cases = [
        {
          url: '/api/v1/call/start',
          key: c.key,
          body: { ...base, conversation_id: 'n1', metadata: { a: '\u0000' } },
        },
        { url: '/api/v1/call/create', key: c.key, body: { ...base, conversation_id: 'n\u00002' } },
        {
          url: '/api/v1/call/create',
          key: c.key,
          body: { ...base, conversation_id: 'n3', tags: [{ key: 'k', type: 'string', value: 'a\u0000b' }] },
        },
        {
          url: '/api/v1/call/create',
          key: c.key,
          body: {
            ...base,
            conversation_id: 'n4',
            transcript: [{ role: 'agent', text: '\u0000', start: 0, stop: 1 }],
          },
        },
        { url: '/api/v1/call-handoff', key: c.writerKey, body: { metadata: { '\u0000': 1 } } },
        { url: '/api/v1/call-handoff', key: c.writerKey, body: { metadata: { a: '\ud800' } } },
        {
          url: '/api/v1/call/start',
          key: c.key,
          body: { ...base, conversation_id: 'n5', metadata: { '\udc00x': 1 } },
        },
      ];
      for (const x of cases) {
        const res = await h.request({ method: 'POST', ...x });
        assert.equal(res.statusCode, 422, `${x.url}: ${res.body}`);
        assert.equal(typeof res.json().error, 'string');
      }
    });
  });
}
