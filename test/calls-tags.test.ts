import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { conversationOf, post, tagsOf } from './helpers/calls.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

const ADD = '/api/v1/call/add_tags';
const MAX = Number.MAX_SAFE_INTEGER;

for (const backend of BACKENDS) {
  describe(`POST /api/v1/call/add_tags (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    /** A company with one call, `call-1` of its agent, and that call's uuid. */
    async function withCall(): Promise<{ c: TestCompany; uuid: string }> {
      const c = await h.company();
      const res = await post(h, c, '/api/v1/call/create', {
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: 'call-1',
      });
      assert.equal(res.statusCode, 200);
      return { c, uuid: (await conversationOf(h, c, 'call-1')).id };
    }
    const body = (c: TestCompany, tags: unknown, extra: Record<string, unknown> = {}) => ({
      conversation_id: 'call-1',
      agent_email: c.agent.email,
      tags,
      ...extra,
    });

    it('stores typed tags and answers the success body', async () => {
      const { c, uuid } = await withCall();
      const res = await post(
        h,
        c,
        ADD,
        body(c, [
          { key: 'queue', type: 'string', value: 'billing' },
          { key: 'csat', type: 'integer', value: 5 },
          { key: 'escalated', type: 'boolean', value: true },
        ]),
      );
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { success: true });
      assert.deepEqual(await tagsOf(h, c, uuid), {
        queue: ['string', 'billing'],
        csat: ['integer', 5],
        escalated: ['boolean', true],
      });
    });

    it('keeps one value per key: a later request replaces value and type, other keys stay', async () => {
      const { c, uuid } = await withCall();
      const first = body(c, [
        { key: 'csat', type: 'integer', value: 3 },
        { key: 'queue', type: 'string', value: 'billing' },
      ]);
      assert.equal((await post(h, c, ADD, first)).statusCode, 200);
      const second = body(c, [{ key: 'csat', type: 'string', value: 'very happy' }]);
      assert.equal((await post(h, c, ADD, second)).statusCode, 200);
      assert.deepEqual(await tagsOf(h, c, uuid), {
        csat: ['string', 'very happy'],
        queue: ['string', 'billing'],
      });
    });

    it('accepts the limits of decision 5', async () => {
      const { c, uuid } = await withCall();
      const tags = [
        { key: 'k'.repeat(128), type: 'string', value: 'x'.repeat(4096) },
        { key: 'max', type: 'integer', value: MAX },
        { key: 'min', type: 'integer', value: -MAX },
        { key: 'zero', type: 'integer', value: 0 },
        { key: 'empty', type: 'string', value: '' },
        { key: 'emoji', type: 'string', value: '😀'.repeat(4096) },
        { key: 'no', type: 'boolean', value: false },
      ];
      const res = await post(h, c, ADD, body(c, tags));
      assert.equal(res.statusCode, 200, res.body);
      const stored = await tagsOf(h, c, uuid);
      assert.equal(Object.keys(stored).length, tags.length);
      assert.deepEqual(stored.max, ['integer', MAX]);
      assert.deepEqual(stored.min, ['integer', -MAX]);
    });

    const invalid: [string, unknown, RegExp][] = [
      [
        'a type outside the three',
        [{ key: 'k', type: 'float', value: 1.5 }],
        /^tags\[0\]\.type: must be one of "string", "integer", "boolean"$/,
      ],
      ['a missing type', [{ key: 'k', value: 1 }], /^tags\[0\]\.type: is required$/],
      [
        'an integer that is not one',
        [{ key: 'k', type: 'integer', value: 1.5 }],
        /^tags\[0\]\.value: must be an integer/,
      ],
      [
        'an integer as a string',
        [{ key: 'k', type: 'integer', value: '5' }],
        /^tags\[0\]\.value: must be an integer/,
      ],
      [
        'an integer above 2^53−1',
        [{ key: 'k', type: 'integer', value: MAX + 1 }],
        /^tags\[0\]\.value: must be within ±9007199254740991/,
      ],
      [
        'an integer below −(2^53−1)',
        [{ key: 'k', type: 'integer', value: -MAX - 1 }],
        /^tags\[0\]\.value: must be within/,
      ],
      [
        'a boolean as a string',
        [{ key: 'k', type: 'boolean', value: 'true' }],
        /^tags\[0\]\.value: must be true or false/,
      ],
      [
        'a boolean as a number',
        [{ key: 'k', type: 'boolean', value: 1 }],
        /^tags\[0\]\.value: must be true or false/,
      ],
      [
        'a string as a number',
        [{ key: 'k', type: 'string', value: 5 }],
        /^tags\[0\]\.value: must be a string/,
      ],
      [
        'a string over 4,096 characters',
        [{ key: 'k', type: 'string', value: 'x'.repeat(4097) }],
        /^tags\[0\]\.value: must be at most 4096 characters$/,
      ],
      [
        'a null value',
        [{ key: 'k', type: 'string', value: null }],
        /^tags\[0\]\.value: must be string or number or boolean$/,
      ],
      ['an object value', [{ key: 'k', type: 'string', value: { a: 1 } }], /^tags\[0\]\.value: /],
      ['an empty key', [{ key: '', type: 'string', value: 'v' }], /^tags\[0\]\.key: /],
      [
        'a key over 128 characters',
        [{ key: 'k'.repeat(129), type: 'string', value: 'v' }],
        /^tags\[0\]\.key: /,
      ],
      [
        'an unknown field in a tag',
        [{ key: 'k', type: 'string', value: 'v', label: 'x' }],
        /^tags\[0\]\.label: unknown field$/,
      ],
      [
        'the same key twice',
        [
          { key: 'k', type: 'string', value: 'a' },
          { key: 'j', type: 'string', value: 'b' },
          { key: 'k', type: 'integer', value: 1 },
        ],
        /^tags\[2\]\.key: "k" is sent more than once$/,
      ],
    ];
    for (const [what, tags, message] of invalid) {
      it(`refuses ${what} with 422 and stores none of the request's tags`, async () => {
        const { c, uuid } = await withCall();
        // A valid tag too: it must not be stored either.
        const sent = [...(tags as unknown[]), { key: 'last', type: 'string', value: 'ok' }];
        const res = await post(h, c, ADD, body(c, sent));
        assert.equal(res.statusCode, 422, res.body);
        assert.match(res.json().error, message);
        assert.deepEqual(await tagsOf(h, c, uuid), {});
      });
    }

    it('refuses an empty tags array and tags that are not an array', async () => {
      const { c, uuid } = await withCall();
      const empty = await post(h, c, ADD, body(c, []));
      assert.equal(empty.statusCode, 422);
      assert.equal(empty.json().error, 'tags: must contain at least one tag');
      const object = await post(h, c, ADD, body(c, { k: 'v' }));
      assert.equal(object.statusCode, 422);
      assert.match(object.json().error, /^tags: /);
      assert.deepEqual(await tagsOf(h, c, uuid), {});
    });

    it('refuses unknown and missing top-level fields', async () => {
      const { c, uuid } = await withCall();
      const tags = [{ key: 'k', type: 'string', value: 'v' }];
      const unknown = await post(h, c, ADD, body(c, tags, { product_id: c.productId }));
      assert.equal(unknown.statusCode, 422);
      assert.equal(unknown.json().error, 'product_id: unknown field');
      for (const field of ['conversation_id', 'agent_email', 'tags']) {
        const b: Record<string, unknown> = body(c, tags);
        delete b[field];
        const res = await post(h, c, ADD, b);
        assert.equal(res.statusCode, 422);
        assert.equal(res.json().error, `${field}: is required`);
      }
      assert.deepEqual(await tagsOf(h, c, uuid), {});
    });

    it('matches agent_email without regard to case', async () => {
      const { c, uuid } = await withCall();
      const tags = [{ key: 'k', type: 'boolean', value: true }];
      const res = await post(h, c, ADD, body(c, tags, { agent_email: c.agent.email.toUpperCase() }));
      assert.equal(res.statusCode, 200);
      assert.deepEqual(await tagsOf(h, c, uuid), { k: ['boolean', true] });
    });

    it('answers 404 for an unknown pair: another conversation_id, agent, or company', async () => {
      const { c, uuid } = await withCall();
      const other = await c.addUser('other@example.test');
      const elsewhere = await withCall();
      const tags = [{ key: 'k', type: 'string', value: 'v' }];
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ conversation_id: 'call-2' }, /^conversation "call-2" of agent ".*" not found$/],
        [{ agent_email: other.email }, /^conversation "call-1" of agent "other@example.test" not found$/],
        [{ agent_email: 'nobody@example.test' }, /matches no active user/],
        [{ agent_email: elsewhere.c.agent.email }, /matches no active user/],
      ];
      for (const [extra, message] of cases) {
        const res = await post(h, c, ADD, body(c, tags, extra));
        assert.equal(res.statusCode, 404, JSON.stringify(extra));
        assert.match(res.json().error, message);
      }
      assert.deepEqual(await tagsOf(h, c, uuid), {});
      assert.deepEqual(await tagsOf(h, elsewhere.c, elsewhere.uuid), {});
    });

    it('answers 409 when several active users hold agent_email, and stores nothing', async () => {
      const { c, uuid } = await withCall();
      const twin = await c.addUser(c.agent.email.toLowerCase());
      const res = await post(h, c, ADD, body(c, [{ key: 'k', type: 'string', value: 'v' }]));
      assert.equal(res.statusCode, 409);
      const b = res.json();
      assert.equal(b.agent_email, c.agent.email);
      assert.deepEqual([...b.conflicting_user_ids].sort(), [c.agent.id, twin.id].sort());
      assert.equal(typeof b.error, 'string');
      assert.deepEqual(await tagsOf(h, c, uuid), {});
    });

    it('loses no tag when 20 requests tag one call at the same time', async () => {
      const { c, uuid } = await withCall();
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          post(
            h,
            c,
            ADD,
            body(c, [
              { key: `own-${i}`, type: 'integer', value: i },
              { key: 'shared', type: 'integer', value: i },
              { key: `z-own-${i}`, type: 'boolean', value: true },
            ]),
          ),
        ),
      );
      for (const res of responses) assert.equal(res.statusCode, 200, res.body);
      const tags = await tagsOf(h, c, uuid);
      assert.equal(Object.keys(tags).length, 41);
      for (let i = 0; i < 20; i++) {
        assert.deepEqual(tags[`own-${i}`], ['integer', i]);
        assert.deepEqual(tags[`z-own-${i}`], ['boolean', true]);
      }
      const shared = tags.shared as [string, number];
      assert.equal(shared[0], 'integer');
      assert.ok(shared[1] >= 0 && shared[1] < 20);
    });
  });
}
