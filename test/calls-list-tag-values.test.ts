/**
 * A string tag whose value is itself JSON text is listed as the string it is (decision 23: tags "in the
 * request's {key, value, type} form"). The list read tag values as jsonb, which both drivers decode, and
 * Drizzle's jsonb column parsed the decoded string again: `"123"` was listed as the number 123 and `"true"` as
 * the boolean, and `"null"`, `"1.5"` or `"[1,2]"` made every page holding the call a 500. The detail was right.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { get, readKeys } from './helpers/reads.ts';

/** String values that are JSON text of every kind, and ones that are not. */
const VALUES = ['true', '123', '1.5', 'null', '[1,2]', '{"a":1}', '"quoted"', 'plain', ''];

for (const backend of BACKENDS) {
  describe(`string tags that read as JSON text (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    it('lists each string tag as the string sent, as the detail shows it', async () => {
      const c = await h.company();
      const keys = await readKeys(c);
      const tags = VALUES.map((value, i) => ({ key: `k${i}`, type: 'string', value }));
      const created = await h.request({
        method: 'POST',
        url: '/api/v1/call/create',
        key: c.key,
        body: {
          agent_email: c.agent.email,
          product_id: c.productId,
          conversation_id: 'json-text-tags',
          tags,
        },
      });
      assert.equal(created.statusCode, 200, created.body);
      // With integer and boolean tags beside them, which stay what they are.
      const added = await h.request({
        method: 'POST',
        url: '/api/v1/call/add_tags',
        key: c.key,
        body: {
          agent_email: c.agent.email,
          conversation_id: 'json-text-tags',
          tags: [
            { key: 'n', type: 'integer', value: 123 },
            { key: 'b', type: 'boolean', value: true },
          ],
        },
      });
      assert.equal(added.statusCode, 200, added.body);

      const list = await get(h, '/api/v1/calls', keys.admin);
      assert.equal(list.statusCode, 200, list.body.slice(0, 300));
      const [call] = list.json().calls as {
        id: string;
        tags: { key: string; type: string; value: unknown }[];
      }[];
      assert.ok(call);
      const expected = [
        ...tags,
        { key: 'n', type: 'integer', value: 123 },
        { key: 'b', type: 'boolean', value: true },
      ].sort((a, b) => (a.key < b.key ? -1 : 1));
      assert.deepEqual(call.tags, expected);
      const detail = await get(h, `/api/v1/calls/${call.id}`, keys.admin);
      assert.deepEqual(detail.json().tags, call.tags);
    });
  });
}
