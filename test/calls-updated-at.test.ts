/**
 * A call's `updated_at` ("when the call last changed") moves with every change of it a client can see,
 * its tags included (decision 27 counts them: each writes `call.updated`). call/create moved it; call/add_tags
 * and the live endpoints wrote the tags and the event and left it as it was.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { get, makeCall, readKeys } from './helpers/reads.ts';

for (const backend of BACKENDS) {
  describe(`updated_at of a call (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    it('moves when its tags change, whichever endpoint changes them', async () => {
      const c = await h.company();
      const keys = await readKeys(c);
      const call = await makeCall(h, c, keys, {
        conversationId: 'touched',
        tags: [{ key: 'a', type: 'integer', value: 1 }],
      });
      const updatedAt = async () =>
        Date.parse((await get(h, `/api/v1/calls/${call.id}`, keys.admin)).json().updated_at);
      const changes: [string, string, Record<string, unknown>][] = [
        [
          'add_tags',
          '/api/v1/call/add_tags',
          {
            agent_email: c.agent.email,
            conversation_id: 'touched',
            tags: [{ key: 'b', type: 'string', value: 'x' }],
          },
        ],
        ['live sale', '/api/v1/live/touched/data/sale', { closed: true }],
        ['live customer', '/api/v1/live/touched/data/customer', { account_id: 'A-1' }],
        [
          'create with tags only',
          '/api/v1/call/create',
          {
            agent_email: c.agent.email,
            product_id: c.productId,
            conversation_id: 'touched',
            tags: [{ key: 'a', type: 'integer', value: 2 }],
          },
        ],
      ];
      for (const [what, url, body] of changes) {
        const before = await updatedAt();
        await sleep(20);
        const res = await h.request({ method: 'POST', url, key: c.key, body });
        assert.equal(res.statusCode, 200, `${what}: ${res.body}`);
        const after = await updatedAt();
        assert.ok(after > before, `${what}: updated_at ${new Date(before).toISOString()} did not move`);
      }
    });
  });
}
