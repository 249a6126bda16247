import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { post } from './helpers/calls.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

/** The agent email the documentation's examples use. */
const A = 'agent@example.com';
const ID = 'call-2026-0001';

type Example = { value: { error: string; agent_email?: string } };
type Paths = Record<
  string,
  {
    post: { responses: Record<string, { content?: Record<string, { examples?: Record<string, Example> }> }> };
  }
>;

/** What a case needs before its request: more users, products or calls. */
interface Setup {
  h: Harness;
  c: TestCompany;
  /** An archived product of the company. */
  archived: number;
}
/** The request that must produce a documented error example. */
type Case = (s: Setup) => Promise<{ url: string; body: unknown }> | { url: string; body: unknown };

const call = (c: TestCompany, extra: Record<string, unknown> = {}) => ({
  agent_email: A,
  product_id: c.productId,
  conversation_id: ID,
  ...extra,
});
const create = (body: unknown) => ({ url: '/api/v1/call/create', body });
const addTags = (tags: unknown[]) => ({
  url: '/api/v1/call/add_tags',
  body: { conversation_id: ID, agent_email: A, tags },
});
const conflictingAgent = async ({ c }: Setup) => {
  await c.addUser('AGENT@EXAMPLE.COM');
};
const createCall = async ({ h, c }: Setup, agentEmail = A) => {
  const res = await post(h, c, '/api/v1/call/create', call(c, { agent_email: agentEmail }));
  assert.equal(res.statusCode, 200);
};

/** Every documented 404/409/422 example of the call endpoints, keyed path → status → example name. */
const CASES: Record<string, Record<string, Record<string, Case>>> = {
  '/api/v1/call/create': {
    '404': {
      agent_not_found: ({ c }) => create(call(c, { agent_email: 'nobody@example.com' })),
      product_not_found: ({ c }) => create(call(c, { product_id: 999_999_999 })),
    },
    '409': {
      agent_conflict: async (s) => {
        await conflictingAgent(s);
        return create(call(s.c, { agent_email: 'Agent@Example.com' }));
      },
    },
    '422': {
      unknown_field: ({ c }) => create(call(c, { company_id: c.id })),
      unsupported_container: ({ c }) => create(call(c, { filename: 'call.mkv' })),
      no_extension_video: ({ c }) => create(call(c, { filename: 'recording', content_type: 'video/mp4' })),
      type_mismatch: ({ c }) => create(call(c, { filename: 'call.wav', content_type: 'audio/mpeg' })),
      video_without_type: ({ c }) => create(call(c, { filename: 'call.mov' })),
      unsupported_video_type: ({ c }) =>
        create(call(c, { filename: 'call.mp4', content_type: 'video/x-matroska' })),
      octet_stream_known_extension: ({ c }) =>
        create(call(c, { filename: 'call.wav', content_type: 'application/octet-stream' })),
      content_type_without_filename: ({ c }) => create(call(c, { content_type: 'audio/wav' })),
      unsafe_filename: ({ c }) => create(call(c, { filename: 'calls/call.wav' })),
      start_time_milliseconds: ({ c }) => create(call(c, { start_time: 1767225600000 })),
      channels_conflict: ({ c }) =>
        create(call(c, { channels: ['agent', 'customer'], speaker: { separation: 'diarize' } })),
      channel_map_order: ({ c }) =>
        create(call(c, { speaker: { separation: 'channels', channel_map: ['agent', 'agent'] } })),
      segment_order: ({ c }) =>
        create(
          call(c, {
            transcript: [
              { role: 'agent', text: 'a', start: 0, stop: 1 },
              { role: 'customer', text: 'b', start: 2, stop: 1 },
            ],
          }),
        ),
      tag_type: ({ c }) => create(call(c, { tags: [{ key: 'k', type: 'float', value: 1.5 }] })),
      tag_value: ({ c }) => create(call(c, { tags: [{ key: 'k', type: 'integer', value: 'x' }] })),
      duplicate_tag: ({ c }) =>
        create(
          call(c, {
            tags: [
              { key: 'csat', type: 'integer', value: 1 },
              { key: 'csat', type: 'integer', value: 2 },
            ],
          }),
        ),
      archived_product: ({ c, archived }) => create(call(c, { product_id: archived })),
    },
  },
  '/api/v1/call/add_tags': {
    '404': {
      agent_not_found: () => ({
        url: '/api/v1/call/add_tags',
        body: {
          conversation_id: ID,
          agent_email: 'nobody@example.com',
          tags: [{ key: 'k', type: 'boolean', value: true }],
        },
      }),
      conversation_not_found: () => addTags([{ key: 'k', type: 'boolean', value: true }]),
    },
    '409': {
      agent_conflict: async (s) => {
        await conflictingAgent(s);
        const req = addTags([{ key: 'k', type: 'boolean', value: true }]);
        return { ...req, body: { ...req.body, agent_email: 'Agent@Example.com' } };
      },
    },
    '422': {
      unknown_field: () => addTags([{ key: 'k', type: 'string', value: 'v', label: 'x' }]),
      empty_tags: () => addTags([]),
      tag_type: () => addTags([{ key: 'k', type: 'float', value: 1.5 }]),
      tag_value: () => addTags([{ key: 'k', type: 'boolean', value: 'yes' }]),
      integer_range: () => addTags([{ key: 'k', type: 'integer', value: 2 ** 53 }]),
      string_length: () => addTags([{ key: 'k', type: 'string', value: 'x'.repeat(4097) }]),
      duplicate_tag: () =>
        addTags([
          { key: 'csat', type: 'integer', value: 1 },
          { key: 'csat', type: 'integer', value: 2 },
        ]),
    },
  },
  '/api/v1/call/start': {
    '404': {
      agent_not_found: () => ({
        url: '/api/v1/call/start',
        body: { conversation_id: ID, agent_email: 'nobody@example.com' },
      }),
      product_not_found: () => ({
        url: '/api/v1/call/start',
        body: { conversation_id: ID, agent_email: A, product_id: 999 },
      }),
    },
    '409': {
      agent_conflict: async (s) => {
        await conflictingAgent(s);
        return { url: '/api/v1/call/start', body: { conversation_id: ID, agent_email: 'Agent@Example.com' } };
      },
      state_conflict: async (s) => {
        await createCall(s);
        const stop = await post(s.h, s.c, '/api/v1/call/stop', { conversation_id: ID, agent_email: A });
        assert.equal(stop.statusCode, 200);
        return { url: '/api/v1/call/start', body: { conversation_id: ID, agent_email: A } };
      },
    },
    '422': {
      unknown_field: ({ c }) => ({
        url: '/api/v1/call/start',
        body: { conversation_id: ID, agent_email: A, company_id: c.id },
      }),
      archived_product: ({ archived }) => ({
        url: '/api/v1/call/start',
        body: { conversation_id: ID, agent_email: A, product_id: archived },
      }),
      metadata_not_object: () => ({
        url: '/api/v1/call/start',
        body: { conversation_id: ID, agent_email: A, metadata: [1] },
      }),
    },
  },
  '/api/v1/call/stop': {
    '404': {
      agent_not_found: () => ({
        url: '/api/v1/call/stop',
        body: { conversation_id: ID, agent_email: 'nobody@example.com' },
      }),
      conversation_not_found: () => ({
        url: '/api/v1/call/stop',
        body: { conversation_id: ID, agent_email: A },
      }),
    },
    '409': {
      agent_conflict: async (s) => {
        await conflictingAgent(s);
        return { url: '/api/v1/call/stop', body: { conversation_id: ID, agent_email: 'Agent@Example.com' } };
      },
    },
    '422': {
      unknown_field: ({ c }) => ({
        url: '/api/v1/call/stop',
        body: { conversation_id: ID, agent_email: A, company_id: c.id },
      }),
      missing_field: () => ({ url: '/api/v1/call/stop', body: { agent_email: A } }),
    },
  },
};

for (const [path, field, value] of [
  ['/api/v1/live/{conversation_id}/data/sale', 'closed', true],
  ['/api/v1/live/{conversation_id}/data/customer', 'account_id', 'A-1'],
] as const) {
  const url = path.replace('{conversation_id}', ID);
  CASES[path] = {
    '404': { conversation_not_found: () => ({ url, body: { [field]: value } }) },
    '409': {
      ambiguous: async (s) => {
        await createCall(s);
        await createCall(s, (await s.c.addUser('second@example.com')).email);
        return { url, body: { [field]: value } };
      },
    },
    '422': {
      no_data: () => ({ url, body: { [field]: null } }),
      unknown_field: ({ c }) => ({ url, body: { [field]: value, company_id: c.id } }),
    },
  };
}

/** Product ids differ from run to run; the examples show some id. */
const normalise = (s: string) => s.replace(/product \d+/g, 'product N');

for (const backend of BACKENDS) {
  describe(`documented error examples are real answers (${backend})`, () => {
    let h: Harness;
    let paths: Paths;
    before(async () => {
      h = await startHarness(backend);
      paths = (await h.request({ method: 'GET', url: '/api/v1/openapi.json' })).json().paths;
    });
    after(() => h.close());

    for (const [path, byStatus] of Object.entries(CASES)) {
      for (const status of ['404', '409', '422']) {
        it(`${path} ${status}: every example is produced by the API, and every one has a case here`, async () => {
          const media = paths[path]?.post.responses[status]?.content?.['application/json'];
          const examples = media?.examples ?? {};
          const cases = byStatus[status] ?? {};
          assert.deepEqual(Object.keys(examples).sort(), Object.keys(cases).sort());
          for (const [name, makeRequest] of Object.entries(cases)) {
            const c = await h.company();
            await c.addUser(A);
            const archived = await c.addProduct({ status: 'archived' });
            const { url, body } = await makeRequest({ h, c, archived });
            const res = await post(h, c, url, body);
            assert.equal(res.statusCode, Number(status), `${name}: ${res.body}`);
            const documented = examples[name]?.value as Example['value'];
            assert.equal(normalise(res.json().error), normalise(documented.error), name);
            if (documented.agent_email) assert.equal(res.json().agent_email, documented.agent_email, name);
          }
        });
      }
    }
  });
}
