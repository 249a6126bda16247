/**
 * The served OpenAPI document is one that client generators can use: Redocly's linter (recommended rules,
 * `redocly.yaml`) finds no error and no warning; every operation has a unique camelCase operationId; no
 * description or error message cites documents a user never sees ("spec 2.4", "decision 19").
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { type Harness, startHarness } from './helpers/harness.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const REDOCLY = join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');

/** "spec 2.4", "spec §3", "decision 19", "decisions 21-29": references to the project's internal documents. */
const INTERNAL_REFERENCE = /\b(spec|decisions?)\s*§?\s*\d/i;

interface Problem {
  ruleId: string;
  severity: string;
  message: string;
  location: { pointer: string }[];
}

/** "#/paths/~1api~1v1~1calls/get/operationId" → "GET /api/v1/calls (#/paths/…)", so a failure names the operation. */
function where(pointer: string): string {
  const parts = pointer
    .replace(/^#\//, '')
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (parts[0] === 'paths' && parts[1] && parts[2])
    return `${parts[2].toUpperCase()} ${parts[1]} (${pointer})`;
  return pointer;
}

const HINTS: Record<string, string> = {
  'operation-operationId':
    "add `operationId: 'verbNoun'` (camelCase, unique) to the route's schema, beside its summary",
  'security-defined': "declare who may call the route in its `config` (`scope: '…'` or `public: true`)",
  'rule/operation-4xx-response': 'declare its client errors with errorResponses(…) in the route schema',
};

describe('OpenAPI document for client generators', () => {
  let h: Harness;
  let body: string;
  let dir: string;
  before(async () => {
    h = await startHarness('pglite');
    body = (await h.request({ method: 'GET', url: '/api/v1/openapi.json' })).body;
    dir = await mkdtemp(join(tmpdir(), 'cqs-openapi-'));
  });
  after(async () => {
    await h.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('passes Redocly lint (recommended rules, redocly.yaml) with no error and no warning', async () => {
    const file = join(dir, 'openapi.json');
    await writeFile(file, body);
    const run = await promisify(execFile)(
      process.execPath,
      [REDOCLY, 'lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format=json'],
      {
        cwd: dir,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        maxBuffer: 64 * 1024 * 1024,
      },
    ).catch((error: { stdout?: string; stderr?: string }) => error);
    const report = JSON.parse(run.stdout ?? '') as { problems: Problem[] };
    const lines = report.problems.map((p) => {
      const hint = HINTS[p.ruleId] ? ` — ${HINTS[p.ruleId]}` : '';
      return `${p.severity} ${p.ruleId} at ${where(p.location[0]?.pointer ?? '')}: ${p.message}${hint}`;
    });
    assert.deepEqual(lines, [], `Redocly lint of /api/v1/openapi.json:\n  ${lines.join('\n  ')}`);
  });

  it('gives every operation a unique camelCase operationId', () => {
    const doc = JSON.parse(body) as { paths: Record<string, Record<string, { operationId?: string }>> };
    const seen = new Map<string, string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const name = `${method.toUpperCase()} ${path}`;
        assert.match(op.operationId ?? '', /^[a-z][A-Za-z0-9]*$/, `${name}: operationId must be camelCase`);
        const id = op.operationId as string;
        assert.ok(!seen.has(id), `${name}: operationId ${id} is used by ${seen.get(id)} too`);
        seen.set(id, name);
      }
    }
  });

  it('cites no internal document in the OpenAPI document: it states the rule itself', () => {
    const hits = [...body.matchAll(new RegExp(`.{0,60}${INTERNAL_REFERENCE.source}.{0,30}`, 'gi'))].map(
      (m) => m[0],
    );
    assert.deepEqual(hits, [], 'say the rule instead of citing "spec N" or "decision N"');
  });

  it('cites no internal document in strings of src/ (error messages, descriptions); comments may', async () => {
    const files = (await readdir(join(ROOT, 'src'), { recursive: true })).filter((f) => f.endsWith('.ts'));
    const hits: string[] = [];
    for (const file of files) {
      const lines = (await readFile(join(ROOT, 'src', file), 'utf8')).split('\n');
      lines.forEach((line, i) => {
        const trimmed = line.trim();
        const comment = /^(\/\/|\/\*|\*\/|\*$|\* )/.test(trimmed); // not "**bold**" inside a string
        if (comment) return;
        const code = line.replace(/\s\/\/.*$/, '');
        if (INTERNAL_REFERENCE.test(code)) hits.push(`src/${file}:${i + 1}: ${trimmed}`);
      });
    }
    assert.deepEqual(hits, [], 'say the rule instead of citing "spec N" or "decision N"');
  });
});
