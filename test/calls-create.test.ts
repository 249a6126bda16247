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
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const segments = [
  { role: 'agent', text: 'Thanks for calling.', start: 0, stop: 1.5 },
  { role: 'customer', text: 'My invoice is wrong.', start: 1.5, stop: 3.25 },
  { role: 'agent', text: 'Let me check.', start: 3.5, stop: 4 },
];

for (const backend of BACKENDS) {
  describe(`POST /api/v1/call/create (${backend})`, () => {
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

    describe('request shapes', () => {
      it('records a transcript-only call and answers with the success body and conversation_id', async () => {
        const c = await h.company();
        const res = await post(h, c, CREATE, base(c, { transcript: segments }));
        assert.equal(res.statusCode, 200);
        assert.deepEqual(res.json(), { success: true, conversation_id: 'call-1' });
        const row = await conversationOf(h, c, 'call-1');
        assert.equal(row.agentUserId, c.agent.id);
        assert.equal(row.productId, c.productId);
        assert.deepEqual(row.transcript, segments);
        assert.equal(row.state, 'created');
        assert.equal(row.speakerSeparation, 'diarize');
        assert.equal(row.channelMap, null);
        assert.deepEqual(await uploadsOf(h, c), []);
      });

      it('answers an audio upload with exactly the upload body of spec 2.5', async () => {
        const c = await h.company();
        const res = await post(h, c, CREATE, base(c, { filename: 'call.wav', content_type: 'audio/wav' }));
        assert.equal(res.statusCode, 200);
        const body = res.json();
        assert.deepEqual(Object.keys(body).sort(), [
          'conversation_id',
          'expires_in',
          'upload_content_type',
          'upload_id',
          'upload_url',
        ]);
        assert.ok(Number.isInteger(body.upload_id));
        assert.equal(body.conversation_id, 'call-1');
        assert.equal(body.expires_in, h.config.uploadUrlExpiresIn);
        assert.equal(body.upload_content_type, 'audio/wav');
        assert.match(body.upload_url, /^http:\/\/127\.0\.0\.1:8080\//);
        const [upload] = await uploadsOf(h, c);
        assert.equal(upload?.id, body.upload_id);
        assert.equal(upload?.filename, 'call.wav');
        assert.equal(upload?.contentType, 'audio/wav');
        assert.equal(upload?.mediaKind, 'audio');
        assert.equal(upload?.status, 'pending');
        assert.equal(upload?.conversationUuid, (await conversationOf(h, c, 'call-1')).id);
      });

      it('mints a UUID conversation_id when none is sent', async () => {
        const c = await h.company();
        const res = await post(h, c, CREATE, { agent_email: c.agent.email, product_id: c.productId });
        assert.equal(res.statusCode, 200);
        const id = res.json().conversation_id;
        assert.match(id, UUID);
        await conversationOf(h, c, id);
        const upload = await post(h, c, CREATE, {
          agent_email: c.agent.email,
          product_id: c.productId,
          filename: 'a.wav',
        });
        assert.match(upload.json().conversation_id, UUID);
        assert.notEqual(upload.json().conversation_id, id);
      });

      it('accepts conversation_id of 1 to 255 characters only', async () => {
        const c = await h.company();
        const long = 'x'.repeat(255);
        assert.equal((await post(h, c, CREATE, base(c, { conversation_id: long }))).statusCode, 200);
        assert.equal((await post(h, c, CREATE, base(c, { conversation_id: 'é' }))).statusCode, 200);
        for (const bad of ['', `${long}x`, 42]) {
          const res = await post(h, c, CREATE, base(c, { conversation_id: bad }));
          assert.equal(res.statusCode, 422, String(bad));
          assert.match(res.json().error, /^conversation_id: /);
        }
        assert.equal((await conversationsOf(h, c)).length, 2);
      });

      it('stores the tags sent with create, typed', async () => {
        const c = await h.company();
        const tags = [
          { key: 'queue', type: 'string', value: 'billing' },
          { key: 'csat', type: 'integer', value: 5 },
          { key: 'escalated', type: 'boolean', value: false },
        ];
        const res = await post(h, c, CREATE, base(c, { tags }));
        assert.equal(res.statusCode, 200);
        const row = await conversationOf(h, c, 'call-1');
        assert.deepEqual(await tagsOf(h, c, row.id), {
          queue: ['string', 'billing'],
          csat: ['integer', 5],
          escalated: ['boolean', false],
        });
      });

      it('refuses invalid tags on create and records nothing', async () => {
        const c = await h.company();
        const cases: [unknown[], RegExp][] = [
          [
            [
              { key: 'a', type: 'string', value: 'x' },
              { key: 'a', type: 'string', value: 'y' },
            ],
            /^tags\[1\]\.key: /,
          ],
          [
            [{ key: 'a', type: 'float', value: 1.5 }],
            /^tags\[0\]\.type: must be one of "string", "integer", "boolean"$/,
          ],
          [[{ key: 'a', type: 'integer', value: 'x' }], /^tags\[0\]\.value: /],
          [[{ key: 'a', type: 'string', value: 'x', note: 1 }], /^tags\[0\]\.note: unknown field$/],
        ];
        for (const [tags, message] of cases) {
          const res = await post(h, c, CREATE, base(c, { tags }));
          assert.equal(res.statusCode, 422);
          assert.match(res.json().error, message);
        }
        assert.deepEqual(await footprint(h, c), NOTHING);
      });
    });

    describe('speaker and the deprecated channels', () => {
      const stored = async (c: TestCompany, id: string) => {
        const row = await conversationOf(h, c, id);
        return [row.speakerSeparation, row.channelMap];
      };

      it('stores separation "channels" with and without channel_map', async () => {
        const c = await h.company();
        const audio = { filename: 'call.wav', content_type: 'audio/wav' };
        const withMap = base(c, {
          ...audio,
          conversation_id: 'a',
          speaker: { separation: 'channels', channel_map: ['customer', 'agent'] },
        });
        assert.equal((await post(h, c, CREATE, withMap)).statusCode, 200);
        assert.deepEqual(await stored(c, 'a'), ['channels', ['customer', 'agent']]);
        const withoutMap = base(c, { ...audio, conversation_id: 'b', speaker: { separation: 'channels' } });
        assert.equal((await post(h, c, CREATE, withoutMap)).statusCode, 200);
        assert.deepEqual(await stored(c, 'b'), ['channels', null]);
        const agentLeft = base(c, {
          conversation_id: 'c',
          speaker: { separation: 'channels', channel_map: ['agent', 'customer'] },
        });
        assert.equal((await post(h, c, CREATE, agentLeft)).statusCode, 200);
        assert.deepEqual(await stored(c, 'c'), ['channels', ['agent', 'customer']]);
      });

      it('diarizes when speaker is omitted or says diarize; a channel_map then has no effect', async () => {
        const c = await h.company();
        assert.equal((await post(h, c, CREATE, base(c, { conversation_id: 'a' }))).statusCode, 200);
        assert.deepEqual(await stored(c, 'a'), ['diarize', null]);
        const diarizeMap = base(c, {
          conversation_id: 'b',
          speaker: { separation: 'diarize', channel_map: ['agent', 'customer'] },
        });
        assert.equal((await post(h, c, CREATE, diarizeMap)).statusCode, 200);
        assert.deepEqual(await stored(c, 'b'), ['diarize', null]);
        const mapOnly = base(c, { conversation_id: 'c', speaker: { channel_map: ['customer', 'agent'] } });
        assert.equal((await post(h, c, CREATE, mapOnly)).statusCode, 200);
        assert.deepEqual(await stored(c, 'c'), ['diarize', null]);
      });

      it('refuses a channel_map that is not one of the two orders, even with diarize', async () => {
        const c = await h.company();
        for (const [speaker, message] of [
          [{ separation: 'diarize', channel_map: ['agent', 'agent'] }, /^speaker\.channel_map: must be/],
          [
            { separation: 'channels', channel_map: ['customer', 'customer'] },
            /^speaker\.channel_map: must be/,
          ],
          [{ separation: 'channels', channel_map: ['agent'] }, /^speaker\.channel_map: /],
          [
            { separation: 'channels', channel_map: ['agent', 'customer', 'agent'] },
            /^speaker\.channel_map: /,
          ],
          [{ separation: 'channels', channel_map: ['agent', 'caller'] }, /^speaker\.channel_map\[1\]: /],
          [{ separation: 'stereo' }, /^speaker\.separation: must be one of "diarize", "channels"$/],
          [{ separation: 'channels', channels: 2 }, /^speaker\.channels: unknown field$/],
        ] as const) {
          const res = await post(h, c, CREATE, base(c, { speaker }));
          assert.equal(res.statusCode, 422, JSON.stringify(speaker));
          assert.match(res.json().error, message);
        }
        assert.deepEqual(await footprint(h, c), NOTHING);
      });

      it('reads the deprecated channels as speaker {separation: channels, channel_map: channels}', async () => {
        const c = await h.company();
        const res = await post(
          h,
          c,
          CREATE,
          base(c, { conversation_id: 'a', channels: ['customer', 'agent'] }),
        );
        assert.equal(res.statusCode, 200);
        assert.deepEqual(await stored(c, 'a'), ['channels', ['customer', 'agent']]);
        const agreeing = base(c, {
          conversation_id: 'b',
          channels: ['agent', 'customer'],
          speaker: { separation: 'channels', channel_map: ['agent', 'customer'] },
        });
        assert.equal((await post(h, c, CREATE, agreeing)).statusCode, 200);
        assert.deepEqual(await stored(c, 'b'), ['channels', ['agent', 'customer']]);
      });

      it('refuses channels that are not two distinct roles or that contradict speaker', async () => {
        const c = await h.company();
        for (const [extra, message] of [
          [{ channels: ['agent', 'agent'] }, /^channels: must be/],
          [{ channels: ['agent'] }, /^channels: /],
          [{ channels: ['agent', 'customer', 'agent'] }, /^channels: /],
          [{ channels: ['left', 'right'] }, /^channels\[0\]: /],
          [{ channels: ['agent', 'customer'], speaker: { separation: 'diarize' } }, /^channels: .*diarize/],
          [
            {
              channels: ['agent', 'customer'],
              speaker: { separation: 'channels', channel_map: ['customer', 'agent'] },
            },
            /^channels: differs from speaker\.channel_map/,
          ],
        ] as const) {
          const res = await post(h, c, CREATE, base(c, extra));
          assert.equal(res.statusCode, 422, JSON.stringify(extra));
          assert.match(res.json().error, message);
        }
        assert.deepEqual(await footprint(h, c), NOTHING);
      });
    });

    describe('start_time', () => {
      it('stores start_time in seconds, fractions kept, and defaults to now', async () => {
        const c = await h.company();
        assert.equal((await post(h, c, CREATE, base(c, { start_time: 1767225600.25 }))).statusCode, 200);
        assert.equal((await conversationOf(h, c, 'call-1')).startTime, 1767225600.25);
        const before = Date.now() / 1000;
        assert.equal((await post(h, c, CREATE, base(c, { conversation_id: 'now' }))).statusCode, 200);
        const after = Date.now() / 1000;
        const { startTime } = await conversationOf(h, c, 'now');
        assert.ok(startTime >= before - 1 && startTime <= after + 1, String(startTime));
        assert.equal(
          (await post(h, c, CREATE, base(c, { conversation_id: 'z', start_time: 0 }))).statusCode,
          200,
        );
        const edge = base(c, { conversation_id: 'edge', start_time: 100_000_000_000 });
        assert.equal((await post(h, c, CREATE, edge)).statusCode, 200);
      });

      it('refuses milliseconds and negative values, saying so', async () => {
        const c = await h.company();
        const ms = await post(h, c, CREATE, base(c, { start_time: 1_767_225_600_000 }));
        assert.equal(ms.statusCode, 422);
        assert.match(ms.json().error, /^start_time: .*milliseconds/);
        const above = await post(h, c, CREATE, base(c, { start_time: 100_000_000_000.5 }));
        assert.equal(above.statusCode, 422);
        const negative = await post(h, c, CREATE, base(c, { start_time: -1 }));
        assert.equal(negative.statusCode, 422);
        assert.match(negative.json().error, /^start_time: must not be negative/);
        const text = await post(h, c, CREATE, base(c, { start_time: '1767225600' }));
        assert.equal(text.statusCode, 422);
        assert.match(text.json().error, /^start_time: /);
        assert.deepEqual(await footprint(h, c), NOTHING);
      });
    });

    describe('transcript', () => {
      it('keeps segments in the order sent, whatever their offsets', async () => {
        const c = await h.company();
        const shuffled = [segments[2], segments[0], segments[1]];
        assert.equal((await post(h, c, CREATE, base(c, { transcript: shuffled }))).statusCode, 200);
        assert.deepEqual((await conversationOf(h, c, 'call-1')).transcript, shuffled);
      });

      it('accepts a segment with start equal to stop and an empty transcript', async () => {
        const c = await h.company();
        const point = [{ role: 'customer', text: '', start: 2, stop: 2 }];
        assert.equal((await post(h, c, CREATE, base(c, { transcript: point }))).statusCode, 200);
        assert.equal(
          (await post(h, c, CREATE, base(c, { conversation_id: 'e', transcript: [] }))).statusCode,
          200,
        );
        assert.deepEqual((await conversationOf(h, c, 'e')).transcript, []);
      });

      it('refuses invalid segments, naming the field, and records nothing', async () => {
        const c = await h.company();
        const ok = { role: 'agent', text: 'hi', start: 0, stop: 1 };
        for (const [segment, message] of [
          [{ ...ok, role: 'supervisor' }, /^transcript\[1\]\.role: must be one of "agent", "customer"$/],
          [{ ...ok, start: 2, stop: 1 }, /^transcript\[1\]\.stop: must not be less than start$/],
          [{ ...ok, start: -1 }, /^transcript\[1\]\.start: /],
          [{ ...ok, stop: -1, start: -2 }, /^transcript\[1\]\.(start|stop): /],
          [{ ...ok, text: 42 }, /^transcript\[1\]\.text: /],
          [{ ...ok, start: '0' }, /^transcript\[1\]\.start: /],
          [{ role: 'agent', start: 0, stop: 1 }, /^transcript\[1\]\.text: is required$/],
          [{ ...ok, speaker: 'A' }, /^transcript\[1\]\.speaker: unknown field$/],
        ] as const) {
          const res = await post(h, c, CREATE, base(c, { transcript: [ok, segment] }));
          assert.equal(res.statusCode, 422, JSON.stringify(segment));
          assert.match(res.json().error, message);
        }
        const notArray = await post(h, c, CREATE, base(c, { transcript: 'hello' }));
        assert.equal(notArray.statusCode, 422);
        assert.deepEqual(await footprint(h, c), NOTHING);
      });
    });

    describe('fields', () => {
      it('refuses unknown fields anywhere, naming them', async () => {
        const c = await h.company();
        for (const [extra, field] of [
          [{ company_id: c.id }, 'company_id'],
          [{ agentEmail: 'x' }, 'agentEmail'],
          [{ speaker: { separation: 'channels', map: ['agent', 'customer'] } }, 'speaker.map'],
          [{ tags: [{ key: 'k', type: 'string', value: 'v', extra: true }] }, 'tags[0].extra'],
          [
            { transcript: [{ role: 'agent', text: '', start: 0, stop: 0, confidence: 1 }] },
            'transcript[0].confidence',
          ],
        ] as const) {
          const res = await post(h, c, CREATE, base(c, extra));
          assert.equal(res.statusCode, 422);
          assert.equal(res.json().error, `${field}: unknown field`);
        }
        assert.deepEqual(await footprint(h, c), NOTHING);
      });

      it('requires agent_email and a positive integer product_id', async () => {
        const c = await h.company();
        const noAgent = await post(h, c, CREATE, { product_id: c.productId });
        assert.equal(noAgent.statusCode, 422);
        assert.equal(noAgent.json().error, 'agent_email: is required');
        const noProduct = await post(h, c, CREATE, { agent_email: c.agent.email });
        assert.equal(noProduct.statusCode, 422);
        assert.equal(noProduct.json().error, 'product_id: is required');
        for (const bad of ['1', 1.5, 0, -3, 2 ** 53]) {
          const res = await post(h, c, CREATE, { agent_email: c.agent.email, product_id: bad });
          assert.equal(res.statusCode, 422, String(bad));
          assert.match(res.json().error, /^product_id: /);
        }
        assert.deepEqual(await footprint(h, c), NOTHING);
      });

      it('answers 400 to a body that is not a JSON object and 415 to another Content-Type', async () => {
        const c = await h.company();
        const array = await post(h, c, CREATE, [1]);
        assert.equal(array.statusCode, 400);
        const text = await h.request({
          method: 'POST',
          url: CREATE,
          key: c.key,
          body: 'agent_email=x',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
        assert.equal(text.statusCode, 415);
      });

      it('needs a key with the calls scope', async () => {
        const c = await h.company();
        const none = await h.request({ method: 'POST', url: CREATE, body: base(c) });
        assert.equal(none.statusCode, 401);
        const writer = await post(h, c, CREATE, base(c), c.writerKey);
        assert.equal(writer.statusCode, 403);
        assert.deepEqual(await footprint(h, c), NOTHING);
      });
    });
  });
}
