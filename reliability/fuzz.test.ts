/**
 * Fuzzing: requests built with fast-check from the OpenAPI document's schemas, valid and mutated, to every
 * /api/v1 endpoint, plus malformed JSON, wrong content types, huge and deeply nested bodies.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { TestCompany } from '../test/helpers/fixtures.ts';
import { type Harness, startHarness } from '../test/helpers/harness.ts';
import { figure, SHORT } from './lib.ts';
import { arbitraryOf, type JsonSchema, mutate } from './schema-arbitrary.ts';

const TOTAL = SHORT ? 1_500 : 10_500;

interface Operation {
  method: string;
  path: string;
  body: JsonSchema | undefined;
  /** The operation's query parameters and their schemas. */
  query: { name: string; schema: JsonSchema }[];
}

/** Query values no schema would make: empty, NUL, hex, huge, separators, encodings. */
const ODD_QUERY_VALUES = [
  '',
  '%00',
  '0x10',
  ' 5',
  '-1',
  '1e999',
  'NaN',
  '[]',
  ':',
  '::',
  '%F0%9F%98%80',
  '%',
  'a'.repeat(5000),
];

function operations(doc: JsonSchema): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, JsonSchema>>)) {
    if (!path.startsWith('/api/v1/')) continue;
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'patch', 'put', 'delete'].includes(method)) continue;
      const content = (op.requestBody as JsonSchema | undefined)?.content as
        | Record<string, JsonSchema>
        | undefined;
      const parameters = (op.parameters as JsonSchema[] | undefined) ?? [];
      out.push({
        method: method.toUpperCase(),
        path,
        body: content?.['application/json']?.schema as JsonSchema,
        query: parameters
          .filter((p) => p.in === 'query' && p.name !== 'api_key')
          .map((p) => ({ name: p.name as string, schema: (p.schema ?? {}) as JsonSchema })),
      });
    }
  }
  return out;
}

const RAW_BODIES = [
  '{',
  '{"a":',
  '[1,2',
  'null',
  '"str"',
  '1e999',
  'NaN',
  '{"a":NaN}',
  '{"a":1,}',
  '\u0000',
  '\uFEFF{}',
  '{"__proto__":{"x":1}}',
  `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
  `{"a":"${'x'.repeat(6 * 1024 * 1024)}"}`,
];
const CONTENT_TYPES = [
  'application/json',
  'text/plain',
  'application/xml',
  'multipart/form-data',
  'application/json; charset=latin1',
  '',
];

describe('fuzzing every /api/v1 endpoint', () => {
  let h: Harness;
  let c: TestCompany;
  let other: TestCompany;
  before(async () => {
    h = await startHarness('pglite');
    c = await h.company();
    other = await h.company();
  });
  after(() => h.close());

  it(`answers ${TOTAL} odd requests without a 5xx and with JSON errors`, async () => {
    const doc = (await h.request({ method: 'GET', url: '/api/v1/openapi.json' })).json() as JsonSchema;
    const ops = operations(doc);
    assert.ok(ops.length >= 10, `found ${ops.length} operations`);
    const created = await h.request({
      method: 'POST',
      url: '/api/v1/call/create',
      key: c.key,
      body: { agent_email: c.agent.email, product_id: c.productId, conversation_id: 'fz-1' },
    });
    assert.equal(created.statusCode, 200);
    const handoff = (
      await h.request({ method: 'POST', url: '/api/v1/call-handoff', key: c.writerKey, body: {} })
    ).json().handoff_id as string;
    const hints = {
      agent_email: [c.agent.email, c.admin.email, other.agent.email],
      product_id: [c.productId, other.productId],
      conversation_id: ['fz-1', 'fz-2'],
    };
    const readKey = (await c.addKey(c.admin.id, ['calls:read', 'calls:delete'])).key;
    const callId = (
      await h.request({ method: 'GET', url: '/api/v1/calls?conversation_id=fz-1', key: readKey })
    ).json().calls[0]?.id as string;
    const params: Record<string, unknown[]> = {
      id: [callId, '00000000-0000-4000-8000-000000000000', 'x', '%F0%9F%98%80', 'a'.repeat(5000)],
      handoff_id: [handoff, '00000000-0000-0000-0000-000000000000', 'x', '%F0%9F%98%80', 'a'.repeat(5000)],
      conversation_id: ['fz-1', '%00', '..', 'a'.repeat(3000)],
      upload_id: [1, 0, -1, '9'.repeat(40), 'x', '1e3'],
    };
    let sent = 0;
    let fiveXX = 0;
    let badErrors = 0;
    const samples: string[] = [];
    const check = (
      label: string,
      res: { statusCode: number; body: string; headers: Record<string, unknown> },
    ) => {
      sent++;
      if (res.statusCode >= 500) {
        fiveXX++;
        if (samples.length < 10) samples.push(`${label} → ${res.statusCode} ${res.body.slice(0, 200)}`);
      }
      if (res.statusCode >= 300 && res.statusCode !== 304) {
        let ok = false;
        try {
          ok = typeof JSON.parse(res.body).error === 'string';
        } catch {}
        if (!ok) {
          badErrors++;
          if (samples.length < 10)
            samples.push(`${label} → ${res.statusCode} non-JSON error ${res.body.slice(0, 200)}`);
        }
      }
    };
    const keys = [c.key, c.writerKey, c.agentKey, readKey, undefined, 'cqs_bogus'];
    const perOp = Math.ceil((TOTAL * 0.9) / ops.length);
    for (const op of ops) {
      const bodyArb = op.body ? arbitraryOf(op.body, doc, hints) : fc.constant(undefined);
      const full = fc.oneof(
        bodyArb,
        bodyArb.chain((b) => mutate(b)),
      );
      const samplesOf = fc.sample(fc.record({ body: full, key: fc.constantFrom(...keys), seed: fc.nat() }), {
        numRuns: perOp,
      });
      for (const s of samplesOf) {
        const url = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
          const pool = params[name] ?? ['x'];
          return encodeURIComponent(String(pool[s.seed % pool.length]));
        });
        const res = await h.request({
          method: op.method,
          url,
          key: s.key,
          ...(s.body !== undefined && op.method !== 'GET' ? { body: s.body } : {}),
        });
        check(`${op.method} ${url} ${JSON.stringify(s.body)?.slice(0, 300)}`, res);
      }
    }
    // Malformed JSON, wrong content types, huge and deeply nested raw bodies.
    const postOps = ops.filter((o) => o.method !== 'GET');
    const rawTotal = TOTAL - sent;
    for (let i = 0; i < rawTotal; i++) {
      const op = postOps[i % postOps.length] as Operation;
      const url = op.path.replace(/\{(\w+)\}/g, (_, name: string) => String((params[name] ?? ['x'])[0]));
      const payload = RAW_BODIES[i % RAW_BODIES.length] as string;
      const type = CONTENT_TYPES[Math.floor(i / RAW_BODIES.length) % CONTENT_TYPES.length] as string;
      const res = await h.request({
        method: op.method,
        url,
        key: c.key,
        body: payload,
        headers: type ? { 'content-type': type } : {},
      });
      check(`${op.method} ${url} raw#${i % RAW_BODIES.length} ${type}`, res);
    }
    // Query strings: values made from each parameter's schema or odd ones, repeated, and unknown names.
    for (const op of ops.filter((o) => o.query.length > 0)) {
      const valueArbs = op.query.map((q) =>
        fc.oneof(
          arbitraryOf(q.schema, doc, hints).map((v) => (Array.isArray(v) ? v : [v])),
          fc.constantFrom(...ODD_QUERY_VALUES).map((v) => [v]),
        ),
      );
      const runs = fc.sample(
        fc.record({
          picks: fc.array(fc.nat(op.query.length - 1), { maxLength: 5 }),
          values: fc.tuple(...valueArbs),
          unknown: fc.boolean(),
          key: fc.constantFrom(...keys),
        }),
        { numRuns: SHORT ? 100 : 500 },
      );
      for (const r of runs) {
        const parts: string[] = [];
        for (const i of r.picks) {
          const q = op.query[i] as Operation['query'][number];
          for (const v of r.values[i] as unknown[]) {
            const text = typeof v === 'string' ? v : JSON.stringify(v);
            parts.push(`${q.name}=${/^%/.test(text) ? text : encodeURIComponent(text)}`);
          }
        }
        if (r.unknown) parts.push('colour=red');
        const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => String((params[name] ?? ['x'])[0]));
        const url = `${path}?${parts.join('&')}`;
        const res = await h.request({ method: op.method, url, key: r.key });
        check(`${op.method} ${url.slice(0, 300)}`, res);
      }
    }
    figure('fuzz_requests_sent', sent);
    figure('fuzz_5xx_answers', fiveXX);
    figure('fuzz_non_json_or_schema_violating_errors', badErrors);
    for (const s of samples) console.log(`  sample: ${s}`);
    if (fiveXX > 0) {
      for (const l of h
        .logs()
        .split('\n')
        .filter((x) => x.includes('"level":50')))
        console.log(`  log: ${l.slice(0, 1500)}`);
    }
    assert.ok(sent >= TOTAL);
    assert.equal(fiveXX, 0);
    assert.equal(badErrors, 0);
  });
});
