import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { post } from './helpers/calls.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

interface Operation {
  summary?: string;
  description?: string;
  deprecated?: boolean;
  security?: unknown[];
  requestBody?: { content: { 'application/json': { schema: Record<string, unknown>; examples?: Examples } } };
  responses: Record<string, { content?: { 'application/json': { schema: unknown; examples?: Examples } } }>;
}
type Examples = Record<string, { summary?: string; value: Record<string, unknown> }>;

const CALLS = {
  create: '/api/v1/call/create',
  add_tags: '/api/v1/call/add_tags',
  start: '/api/v1/call/start',
  stop: '/api/v1/call/stop',
  sale: '/api/v1/live/{conversation_id}/data/sale',
  customer: '/api/v1/live/{conversation_id}/data/customer',
};

/** The spec's video table, hard-coded: the docs must show an example of each. */
const VIDEO_TABLE: [string, string][] = [
  ['3gp', 'video/3gpp'],
  ['3gpp', 'video/3gpp'],
  ['flv', 'video/x-flv'],
  ['mov', 'video/quicktime'],
  ['mp4', 'video/mp4'],
  ['mpeg', 'video/mpeg'],
  ['mpg', 'video/mpeg'],
  ['webm', 'video/webm'],
  ['wmv', 'video/x-ms-wmv'],
];

for (const backend of BACKENDS) {
  describe(`OpenAPI description of the call endpoints (${backend})`, () => {
    let h: Harness;
    let paths: Record<string, { post: Operation }>;
    before(async () => {
      h = await startHarness(backend);
      const res = await h.request({ method: 'GET', url: '/api/v1/openapi.json' });
      assert.equal(res.statusCode, 200);
      paths = res.json().paths;
    });
    after(() => h.close());

    const op = (path: string) => {
      const found = paths[path]?.post;
      assert.ok(found, `${path} is documented`);
      return found;
    };
    const requestExamples = (path: string) =>
      op(path).requestBody?.content['application/json'].examples ?? {};

    /** Sends an example as the company, with its agent and product in place of the placeholders. */
    const send = (c: TestCompany, url: string, value: Record<string, unknown>) => {
      const body = { ...value };
      if ('agent_email' in body) body.agent_email = c.agent.email;
      if ('product_id' in body) body.product_id = c.productId;
      return post(h, c, url, body);
    };

    it('documents every call endpoint with the calls security, every error status, and rejects unknown fields', () => {
      for (const path of Object.values(CALLS)) {
        const o = op(path);
        assert.deepEqual(o.security, [{ bearerAuth: [] }, { apiKeyQuery: [] }], path);
        for (const status of ['200', '400', '401', '403', '404', '409', '413', '415', '422', '429', '503']) {
          assert.ok(o.responses[status], `${path} documents ${status}`);
        }
        assert.equal(o.requestBody?.content['application/json'].schema.additionalProperties, false, path);
      }
    });

    it('has an example of every request shape of call/create, and every one is accepted', async () => {
      const examples = requestExamples(CALLS.create);
      const values = Object.values(examples).map((e) => e.value);
      const has = (predicate: (v: Record<string, unknown>) => boolean, what: string) =>
        assert.ok(values.some(predicate), `an example of ${what}`);
      has((v) => 'transcript' in v && !('filename' in v), 'transcript only');
      has(
        (v) => v.filename !== undefined && v.content_type?.toString().startsWith('audio/') === true,
        'audio with type',
      );
      has((v) => v.filename !== undefined && v.content_type === undefined, 'audio without content_type');
      const speaker = (v: Record<string, unknown>) =>
        v.speaker as { separation?: string; channel_map?: unknown };
      has(
        (v) => speaker(v)?.separation === 'channels' && speaker(v).channel_map !== undefined,
        'channels with map',
      );
      has(
        (v) => speaker(v)?.separation === 'channels' && speaker(v).channel_map === undefined,
        'channels, no map',
      );
      has((v) => Array.isArray(v.channels), 'the deprecated channels');
      has((v) => v.content_type === 'audio/mp4' && String(v.filename).endsWith('.mp4'), 'audio-only mp4');
      has((v) => typeof v.start_time === 'number', 'start_time');
      has((v) => Array.isArray(v.tags), 'tags');
      for (const [ext, type] of VIDEO_TABLE) {
        has((v) => v.content_type === type && String(v.filename).endsWith(`.${ext}`), `video .${ext}`);
      }
      for (const [name, example] of Object.entries(examples))
        assert.ok(example.summary, `${name} has a summary`);
      const c = await h.company();
      for (const [name, example] of Object.entries(examples)) {
        const res = await send(c, CALLS.create, example.value);
        assert.equal(res.statusCode, 200, `${name}: ${res.body}`);
      }
    });

    it('has request examples of add_tags, start, stop and the live endpoints that are accepted', async () => {
      const c = await h.company();
      assert.equal(
        (await send(c, CALLS.create, { agent_email: '', product_id: 0, conversation_id: 'call-2026-0001' }))
          .statusCode,
        200,
      );
      for (const path of [CALLS.add_tags, CALLS.start, CALLS.stop]) {
        const examples = requestExamples(path);
        assert.ok(Object.keys(examples).length >= 1, path);
        for (const [name, example] of Object.entries(examples)) {
          const res = await send(c, path, example.value);
          assert.equal(res.statusCode, 200, `${path} ${name}: ${res.body}`);
        }
      }
      for (const path of [CALLS.sale, CALLS.customer]) {
        const url = path.replace('{conversation_id}', 'call-2026-0001');
        for (const [name, example] of Object.entries(requestExamples(path))) {
          const res = await send(c, url, example.value);
          assert.equal(res.statusCode, 200, `${path} ${name}: ${res.body}`);
        }
      }
    });

    it('has an example of each error of each endpoint', () => {
      for (const path of Object.values(CALLS)) {
        for (const status of ['404', '409', '422']) {
          const media = op(path).responses[status]?.content?.['application/json'];
          const examples = media?.examples ?? {};
          assert.ok(Object.keys(examples).length >= 1, `${path} ${status} has examples`);
          for (const e of Object.values(examples)) assert.equal(typeof e.value.error, 'string');
        }
      }
      const conflict = op(CALLS.create).responses['409']?.content?.['application/json'].examples ?? {};
      assert.ok(Object.values(conflict).some((e) => Array.isArray(e.value.conflicting_user_ids)));
      const invalid = Object.keys(
        op(CALLS.create).responses['422']?.content?.['application/json'].examples ?? {},
      );
      for (const name of ['unknown_field', 'unsupported_container', 'start_time_milliseconds', 'tag_type']) {
        assert.ok(invalid.includes(name), name);
      }
    });

    it('marks start and stop beta, the live endpoints and channels deprecated', () => {
      for (const path of [CALLS.start, CALLS.stop]) {
        assert.match(String(op(path).summary), /beta/i);
        assert.match(String(op(path).description), /\*\*Beta\*\*/);
        assert.notEqual(op(path).deprecated, true);
      }
      for (const path of [CALLS.sale, CALLS.customer]) {
        assert.equal(op(path).deprecated, true);
        assert.match(String(op(path).description), /Deprecation/);
      }
      const properties = op(CALLS.create).requestBody?.content['application/json'].schema
        .properties as Record<string, { deprecated?: boolean }>;
      assert.equal(properties.channels?.deprecated, true);
      assert.match(String(op(CALLS.start).description), /product_id/);
    });

    it('shows the media tables in the description of call/create', () => {
      const description = String(op(CALLS.create).description);
      for (const [ext, type] of VIDEO_TABLE) {
        assert.match(
          description,
          new RegExp(`^\\|[^\\n]*\\.${ext}\\b[^\\n]*\\| ${type.replace('/', '\\/')} \\|$`, 'm'),
        );
      }
      const audio: [string, string][] = [
        ['wav', 'audio/wav'],
        ['mp3', 'audio/mpeg'],
        ['m4a', 'audio/mp4'],
        ['mp4', 'audio/mp4'],
        ['3gp', 'audio/3gpp'],
      ];
      for (const [ext, type] of audio) {
        assert.match(description, new RegExp(`^\\| \\.${ext} \\| ${type.replace('/', '\\/')} \\|`, 'm'));
      }
      assert.match(description, /\.mkv/);
      assert.match(description, /application\/octet-stream/);
    });
  });
}
