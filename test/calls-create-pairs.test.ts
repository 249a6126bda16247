import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  conversationOf,
  conversationsOf,
  footprint,
  NOTHING,
  post,
  tagsOf,
  uploadsOf,
} from './helpers/calls.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

const CREATE = '/api/v1/call/create';

const segments = [
  { role: 'agent', text: 'Thanks for calling.', start: 0, stop: 1.5 },
  { role: 'customer', text: 'My invoice is wrong.', start: 1.5, stop: 3.25 },
];

for (const backend of BACKENDS) {
  describe(`POST /api/v1/call/create: agents, products, existing pairs, concurrency (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    const base = (c: TestCompany, extra: Record<string, unknown> = {}) => ({
      agent_email: c.agent.email,
      product_id: c.productId,
      conversation_id: 'call-1',
      ...extra,
    });

    describe('agents', () => {
      it('matches agent_email without regard to case', async () => {
        const c = await h.company();
        const res = await post(h, c, CREATE, base(c, { agent_email: c.agent.email.toUpperCase() }));
        assert.equal(res.statusCode, 200);
        assert.equal((await conversationOf(h, c, 'call-1')).agentUserId, c.agent.id);
        const lower = await post(h, c, CREATE, base(c, { agent_email: c.agent.email.toLowerCase() }));
        assert.equal(lower.statusCode, 200);
        assert.equal((await conversationsOf(h, c)).length, 1);
      });

      it('answers 404 when no active user holds agent_email, and records nothing', async () => {
        const c = await h.company();
        const gone = await c.addUser('gone@example.test', { active: false });
        const other = await h.company();
        for (const email of ['nobody@example.test', gone.email, other.agent.email]) {
          const res = await post(h, c, CREATE, base(c, { agent_email: email, filename: 'a.wav' }));
          assert.equal(res.statusCode, 404, email);
          assert.match(res.json().error, /agent_email .* matches no active user/);
        }
        assert.deepEqual(await footprint(h, c), NOTHING);
        assert.deepEqual(await footprint(h, other), NOTHING);
      });

      it('answers 409 with agent_email as sent and the active holders when several hold it', async () => {
        const c = await h.company();
        const twin = await c.addUser(c.agent.email.toLowerCase());
        await c.addUser(c.agent.email.toUpperCase(), { active: false });
        const sent = c.agent.email.toUpperCase();
        const res = await post(
          h,
          c,
          CREATE,
          base(c, { agent_email: sent, filename: 'a.wav', tags: [{ key: 'k', type: 'string', value: 'v' }] }),
        );
        assert.equal(res.statusCode, 409);
        const body = res.json();
        assert.deepEqual(Object.keys(body).sort(), ['agent_email', 'conflicting_user_ids', 'error']);
        assert.equal(body.agent_email, sent);
        assert.equal(typeof body.error, 'string');
        assert.deepEqual([...body.conflicting_user_ids].sort(), [c.agent.id, twin.id].sort());
        assert.deepEqual(await footprint(h, c), NOTHING);
      });
    });

    describe('products', () => {
      it('answers 404 for a product the caller may not see, and 422 for an archived one', async () => {
        const c = await h.company();
        const other = await h.company();
        const ungranted = await c.addProduct();
        const archived = await c.addProduct({ status: 'archived', grant: [c.agent.id] });
        const cases: [string, number, number][] = [
          [c.key, other.productId, 404],
          [c.key, 987654321, 404],
          [c.agentKey, ungranted, 404],
          [c.key, archived, 422],
          [c.agentKey, archived, 422],
        ];
        for (const [key, productId, status] of cases) {
          const res = await post(h, c, CREATE, base(c, { product_id: productId }), key);
          assert.equal(res.statusCode, status, `${productId}`);
          if (status === 422) assert.match(res.json().error, /^product_id: product \d+ is archived$/);
          else assert.match(res.json().error, /^product \d+ not found$/);
        }
        assert.deepEqual(await footprint(h, c), NOTHING);
        const granted = await post(h, c, CREATE, base(c, { product_id: c.productId }), c.agentKey);
        assert.equal(granted.statusCode, 200);
        const admin = await post(h, c, CREATE, base(c, { conversation_id: 'b', product_id: ungranted }));
        assert.equal(admin.statusCode, 200);
      });
    });

    describe('an existing pair', () => {
      it('is updated: transcript replaced, tags upserted, product updated, the rest kept unless sent', async () => {
        const c = await h.company();
        const second = await c.addProduct();
        const first = await post(
          h,
          c,
          CREATE,
          base(c, {
            start_time: 1000,
            transcript: segments,
            speaker: { separation: 'channels', channel_map: ['agent', 'customer'] },
            tags: [
              { key: 'a', type: 'integer', value: 1 },
              { key: 'b', type: 'string', value: 'kept' },
            ],
          }),
        );
        assert.equal(first.statusCode, 200);
        const before = await conversationOf(h, c, 'call-1');
        const replacement = [{ role: 'customer', text: 'Hello?', start: 0, stop: 1 }];
        const again = await post(
          h,
          c,
          CREATE,
          base(c, {
            agent_email: c.agent.email.toUpperCase(),
            product_id: second,
            transcript: replacement,
            tags: [{ key: 'a', type: 'string', value: 'now a string' }],
          }),
        );
        assert.equal(again.statusCode, 200);
        assert.deepEqual(again.json(), { success: true, conversation_id: 'call-1' });
        const rows = await conversationsOf(h, c);
        assert.equal(rows.length, 1);
        const after = rows[0];
        assert.equal(after?.id, before.id);
        assert.equal(after?.productId, second);
        assert.deepEqual(after?.transcript, replacement);
        assert.equal(after?.startTime, 1000);
        assert.equal(after?.speakerSeparation, 'channels');
        assert.deepEqual(after?.channelMap, ['agent', 'customer']);
        assert.deepEqual(await tagsOf(h, c, before.id), {
          a: ['string', 'now a string'],
          b: ['string', 'kept'],
        });
      });

      it('keeps the stored transcript when none is sent, and changes speaker and start_time when sent', async () => {
        const c = await h.company();
        assert.equal(
          (await post(h, c, CREATE, base(c, { transcript: segments, start_time: 5 }))).statusCode,
          200,
        );
        const res = await post(h, c, CREATE, base(c, { start_time: 6, channels: ['customer', 'agent'] }));
        assert.equal(res.statusCode, 200);
        const row = await conversationOf(h, c, 'call-1');
        assert.deepEqual(row.transcript, segments);
        assert.equal(row.startTime, 6);
        assert.equal(row.speakerSeparation, 'channels');
        assert.deepEqual(row.channelMap, ['customer', 'agent']);
        const diarize = await post(h, c, CREATE, base(c, { speaker: { separation: 'diarize' } }));
        assert.equal(diarize.statusCode, 200);
        const last = await conversationOf(h, c, 'call-1');
        assert.equal(last.speakerSeparation, 'diarize');
        assert.equal(last.channelMap, null);
      });

      it('issues a new upload each time a filename is sent', async () => {
        const c = await h.company();
        const a = await post(h, c, CREATE, base(c, { filename: 'a.wav' }));
        const b = await post(h, c, CREATE, base(c, { filename: 'b.mp4', content_type: 'video/mp4' }));
        assert.equal(a.statusCode, 200);
        assert.equal(b.statusCode, 200);
        assert.notEqual(a.json().upload_id, b.json().upload_id);
        assert.notEqual(a.json().upload_url, b.json().upload_url);
        const uploads = await uploadsOf(h, c);
        assert.deepEqual(
          uploads.map((u) => [u.id, u.filename, u.mediaKind]),
          [
            [a.json().upload_id, 'a.wav', 'audio'],
            [b.json().upload_id, 'b.mp4', 'video'],
          ],
        );
        assert.equal((await conversationsOf(h, c)).length, 1);
      });

      it('is per agent: the same conversation_id of two agents is two calls', async () => {
        const c = await h.company();
        const other = await c.addUser('other-agent@example.test');
        assert.equal((await post(h, c, CREATE, base(c))).statusCode, 200);
        assert.equal((await post(h, c, CREATE, base(c, { agent_email: other.email }))).statusCode, 200);
        const rows = await conversationsOf(h, c);
        assert.deepEqual(rows.map((r) => r.agentUserId).sort(), [c.agent.id, other.id].sort());
      });
    });

    describe('atomicity and concurrency', () => {
      it('records nothing when a step after the conversation fails (one transaction)', async () => {
        const c = await h.company();
        const storage = h.services.storage;
        const original = storage.presignPut;
        storage.presignPut = async () => {
          throw new Error('storage exploded');
        };
        try {
          const res = await post(
            h,
            c,
            CREATE,
            base(c, { filename: 'a.wav', tags: [{ key: 'k', type: 'boolean', value: true }] }),
          );
          assert.equal(res.statusCode, 500);
          assert.deepEqual(res.json(), { error: 'internal server error' });
        } finally {
          storage.presignPut = original;
        }
        assert.deepEqual(await footprint(h, c), NOTHING);
      });

      it('ends 20 simultaneous creates of one new pair as one conversation with every tag', async () => {
        const c = await h.company();
        const responses = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            post(
              h,
              c,
              CREATE,
              base(c, {
                conversation_id: 'race',
                ...(i % 2 ? { filename: `part-${i}.wav` } : {}),
                tags: [{ key: `k${i}`, type: 'integer', value: i }],
              }),
            ),
          ),
        );
        for (const res of responses) {
          assert.equal(res.statusCode, 200, res.body);
          assert.equal(res.json().conversation_id, 'race');
        }
        const rows = await conversationsOf(h, c);
        assert.equal(rows.length, 1);
        const tags = await tagsOf(h, c, rows[0]?.id as string);
        assert.equal(Object.keys(tags).length, 20);
        const uploads = await uploadsOf(h, c);
        assert.equal(uploads.length, 10);
        assert.ok(uploads.every((u) => u.conversationUuid === rows[0]?.id));
      });
    });
  });
}
