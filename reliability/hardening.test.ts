/**
 * The runs of issue 18's probe against a real `cqs serve`: deep and wide JSON on PGlite while /healthz is
 * polled, over-long, short and exact upload bodies on a raw socket, percent-encoded secret parameter names,
 * a flood of failed authentications from one address, and a kill -9 in the middle of a 20 MB upload.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateApiKey, hashApiKey } from '../src/domain/access/api-keys.ts';
import { createPostgresDatabase } from '../test/helpers/harness.ts';
import { freePort } from '../test/helpers/process.ts';
import { call, figure, type SeededKeys, type Served, SHORT, seedCompany, serve, tempDir } from './lib.ts';

/** A request with a text body and extra headers; status 0 on a network error. */
async function send(
  port: number,
  method: string,
  path: string,
  options: { key?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; text: string; headers?: Headers; ms: number }> {
  const started = performance.now();
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: {
        ...(options.key ? { authorization: `Bearer ${options.key}` } : {}),
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...options.headers,
      },
      ...(options.body !== undefined ? { body: options.body } : {}),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    return { status: res.status, text, headers: res.headers, ms: performance.now() - started };
  } catch {
    return { status: 0, text: '', ms: performance.now() - started };
  }
}

/** `{"a":{"a":…1…}}` nested `levels` deep, as text. */
const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

/** A metadata object of `n` keys with the given JSON value, as text. */
const wide = (n: number, value: string, prefix = 'k') =>
  `{${Array.from({ length: n }, (_, i) => `"${prefix}${i}":${value}`).join(',')}}`;

/** How many times any of `secrets` occurs in `text`. */
function occurrences(text: string, secrets: string[]): number {
  return secrets.reduce((n, s) => n + text.split(s).length - 1, 0);
}

/** A key whole, its random part and its hash: the ways it could reach a log. */
const traces = (key: string) => [key, key.slice(4, 20), hashApiKey(key)];

/** A new call with an upload URL, as a path and query on the served port, and its upload id. */
async function newUpload(s: Served, keys: SeededKeys, productId: number, id: string) {
  const r = await call(s.port, 'POST', '/api/v1/call/create', keys.calls, {
    agent_email: keys.agentEmail,
    product_id: productId,
    conversation_id: id,
    filename: `${id}.wav`,
    content_type: 'audio/wav',
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const body = r.body as { upload_url: string; upload_id: number };
  const u = new URL(body.upload_url);
  return {
    path: `${u.pathname}${u.search}`,
    uploadId: body.upload_id,
    objectKey: decodeURIComponent(u.pathname.split('/object/')[1] ?? ''),
  };
}

/**
 * Writes `head` and `body` on one socket (half-closing it when `end`); resolves with the status of every
 * answer once the server closed the socket or sent nothing more for 2 s after an answer.
 */
function exchange(port: number, head: string, body: Buffer, end: boolean): Promise<number[]> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    let quiet = setTimeout(() => socket.destroy(), 60_000);
    socket.on('data', (d) => {
      data += d.toString('latin1');
      clearTimeout(quiet);
      quiet = setTimeout(() => socket.destroy(), 2000);
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(quiet);
      resolve([...data.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])));
    });
    socket.on('connect', () => {
      socket.write(head);
      if (end) socket.end(body);
      else socket.write(body);
    });
  });
}

/** A loopback proxy to PostgreSQL that keeps every byte the service sent (to count key look-ups). */
async function tapProxy(port: number, target: URL) {
  const sent: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    client.on('data', (d: Buffer) => {
      sent.push(d);
      upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => client.write(d));
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    /** Everything sent so far, as text. */
    text: () => Buffer.concat(sent).toString('latin1'),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('hardening runs on PGlite (issue 18)', () => {
  let dataDir: string;
  let env: Record<string, string>;
  let keys: SeededKeys;
  let s: Served;
  let productId: number;
  before(async () => {
    dataDir = await tempDir('cqs-hardening-');
    env = { DATA_DIR: dataDir, LOG_LEVEL: 'info' };
    keys = await seedCompany(env, dataDir, 'hardening');
    s = await serve(env);
    const list = await call(s.port, 'GET', '/api/v1/product/list', keys.calls);
    productId = (list.body as { products: { id: number }[] }).products[0]?.id as number;
  });
  after(async () => {
    await s?.kill();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('answers deep and wide JSON at and past its limits while /healthz keeps answering', async () => {
    let done = false;
    /** The full run's last phase: 300,000 keys, measured but not bounded (see below). */
    let widest = false;
    let healthSlowest = 0;
    let healthSlowestWidest = 0;
    let healthAnswers = 0;
    let healthFailures = 0;
    const healthFailed: string[] = [];
    const poll = (async () => {
      while (!done) {
        const inWidest = widest;
        const r = await send(s.port, 'GET', '/healthz');
        if (inWidest) healthSlowestWidest = Math.max(healthSlowestWidest, r.ms);
        else healthSlowest = Math.max(healthSlowest, r.ms);
        if (r.status === 200) healthAnswers++;
        else {
          healthFailures++;
          healthFailed.push(
            `${r.status}${r.text ? ` ${r.text.slice(0, 100)}` : ''} after ${Math.round(r.ms)} ms`,
          );
        }
        await new Promise((res) => setTimeout(res, 10));
      }
    })();
    const statuses: Record<string, number> = {};
    let slowest = 0;
    const run = async (name: string, method: string, path: string, body: string) => {
      const r = await send(s.port, method, path, { key: keys.writer, body });
      statuses[name] = r.status;
      slowest = Math.max(slowest, r.ms);
      return r;
    };
    const handoff = '/api/v1/call-handoff';
    const long = JSON.stringify('x'.repeat(2000));
    try {
      const full = await run('create_1000_keys', 'POST', handoff, `{"metadata":${wide(1000, long)}}`);
      const id = (JSON.parse(full.text) as { handoff_id: string }).handoff_id;
      await run('create_1001_keys', 'POST', handoff, `{"metadata":${wide(1001, '1')}}`);
      await run('patch_1001_more_keys', 'PATCH', `${handoff}/${id}`, `{"metadata":${wide(1, '1', 'm')}}`);
      await run(
        'patch_100000_null_keys',
        'PATCH',
        `${handoff}/${id}`,
        `{"metadata":${wide(100_000, 'null')}}`,
      );
      const removed = await run(
        'patch_1000_null_keys',
        'PATCH',
        `${handoff}/${id}`,
        `{"metadata":${wide(1000, 'null')}}`,
      );
      assert.deepEqual((JSON.parse(removed.text) as { metadata: object }).metadata, {});
      // The body is level 1, metadata level 2.
      await run('create_depth_32', 'POST', handoff, `{"metadata":${nested(31)}}`);
      await run('create_depth_33', 'POST', handoff, `{"metadata":${nested(32)}}`);
      await run('create_depth_10000', 'POST', handoff, `{"metadata":${nested(10_000)}}`);
      await run('patch_depth_10000', 'PATCH', `${handoff}/${id}`, `{"metadata":${nested(10_000)}}`);
      const start = `"conversation_id":"deep","agent_email":"${keys.agentEmail}"`;
      const r = await send(s.port, 'POST', '/api/v1/call/start', {
        key: keys.calls,
        body: `{${start},"metadata":${nested(10_000)}}`,
      });
      statuses.call_start_depth_10000 = r.status;
      await run('patch_number_1e400', 'PATCH', `${handoff}/${id}`, '{"metadata":{"big":1e400}}');
      if (!SHORT) {
        // Near the 5 MiB body limit. Refused, but its validation blocks the process for seconds (an open
        // problem, in the README): a figure, not a bound.
        widest = true;
        await new Promise((res) => setTimeout(res, 300));
        const t = performance.now();
        const r = await send(s.port, 'PATCH', `${handoff}/${id}`, {
          key: keys.writer,
          body: `{"metadata":${wide(300_000, 'null')}}`,
        });
        statuses.patch_300000_null_keys = r.status;
        figure('json_300000_null_keys_request_ms', Math.round(performance.now() - t));
        await new Promise((res) => setTimeout(res, 300));
      }
    } finally {
      done = true;
      await poll;
    }
    for (const [name, status] of Object.entries(statuses)) figure(`json_status_${name}`, status);
    figure('json_healthz_answers', healthAnswers);
    figure('json_healthz_failures', healthFailures);
    figure('json_healthz_slowest_ms', Math.round(healthSlowest));
    figure('json_slowest_request_ms', Math.round(slowest));
    if (!SHORT) figure('json_300000_null_keys_healthz_slowest_ms', Math.round(healthSlowestWidest));
    assert.deepEqual(statuses, {
      create_1000_keys: 201,
      create_1001_keys: 422,
      patch_1001_more_keys: 422,
      patch_100000_null_keys: 422,
      patch_1000_null_keys: 200,
      create_depth_32: 201,
      create_depth_33: 422,
      create_depth_10000: 422,
      patch_depth_10000: 422,
      call_start_depth_10000: 422,
      patch_number_1e400: 422,
      ...(SHORT ? {} : { patch_300000_null_keys: 422 }),
    });
    assert.equal(healthFailures, 0, healthFailed.join('; '));
    assert.ok(healthAnswers > 0);
    // Before the fixes one PATCH of 100,000 keys froze the process for 23 s; refusing them now costs about
    // 1 s of validation, 4 s at load average 13-18: the bounds leave room for a loaded machine.
    assert.ok(healthSlowest < 15_000, `/healthz took ${healthSlowest} ms`);
    assert.ok(slowest < 20_000, `a request took ${slowest} ms`);
  });

  it('tells an upload client what was stored: exact, over-long and short bodies on a raw socket', async () => {
    const cases = { exact: [1000, 1000], over_long: [1000, 1500], short: [1000, 600] } as const;
    let agreeing = 0;
    for (const [name, [declared, sent]] of Object.entries(cases)) {
      const up = await newUpload(s, keys, productId, `body-${name}`);
      const head =
        `PUT ${up.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: audio/wav\r\n` +
        `Content-Length: ${declared}\r\n\r\n`;
      const body = Buffer.concat([
        Buffer.alloc(Math.min(sent, declared), 0x61),
        Buffer.alloc(Math.max(0, sent - declared), 0x62),
      ]);
      const answers = await exchange(s.port, head, body, sent < declared);
      const shown = await call(s.port, 'GET', `/api/v1/upload/${up.uploadId}`, keys.calls);
      const status = (shown.body as { status: string }).status;
      const file = join(dataDir, 'objects', up.objectKey);
      const content = existsSync(file) ? await readFile(file) : undefined;
      const stored = status !== 'pending' && content?.equals(Buffer.alloc(declared, 0x61)) === true;
      const nothing = status === 'pending' && content === undefined;
      const agrees = answers[0] === 200 ? stored : nothing;
      if (agrees) agreeing++;
      figure(`upload_body_${name}_answers`, answers.join('+') || 'none');
      figure(`upload_body_${name}_stored`, stored ? `yes(${status})` : nothing ? 'no' : `half(${status})`);
      assert.ok(agrees, `${name}: answers ${answers}, upload ${status}, file ${content?.length ?? 'absent'}`);
      // The rule: a body that ends at Content-Length succeeds (extra bytes are a next request, answered 400).
      assert.equal(answers[0], sent >= declared ? 200 : 400, `${name}: ${answers}`);
    }
    figure('upload_body_client_and_storage_agree', `${agreeing}/3`);
  });

  it('keeps keys and signatures out of the log however their parameter names are encoded', async () => {
    const statuses: number[] = [];
    for (const name of ['api%5Fkey', '%61pi_key', 'api_key']) {
      statuses.push((await send(s.port, 'GET', `/api/v1/product/list?${name}=${keys.calls}`)).status);
    }
    const up = await newUpload(s, keys, productId, 'encoded-names');
    const [path, query] = up.path.split('?') as [string, string];
    const signature = new URLSearchParams(query).get('X-Cqs-Signature') as string;
    const encoded = `${path}?${query.replaceAll('X-Cqs-', 'X%2DCqs%2D')}`;
    const put = await send(s.port, 'PUT', encoded, { body: 'x', headers: { 'content-type': 'audio/wav' } });
    statuses.push(put.status);
    await new Promise((r) => setTimeout(r, 300));
    const leaks = occurrences(s.output(), [...traces(keys.calls), ...traces(keys.writer), signature]);
    figure('encoded_names_statuses', statuses.join('+'));
    figure('encoded_names_secrets_in_logs', leaks);
    assert.deepEqual(statuses, [200, 200, 200, 200]);
    assert.ok(s.output().includes('api_key'), 'the requests were logged');
    assert.equal(leaks, 0);
  });

  it('removes the temporary file of an upload cut by kill -9 at the next start', async () => {
    const up = await newUpload(s, keys, productId, 'killed');
    const tmp = join(dataDir, 'objects-tmp');
    const sent = 20 * 1024 * 1024;
    const socket = connect(s.port, '127.0.0.1');
    socket.on('error', () => {});
    await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
    socket.write(
      `PUT ${up.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: audio/wav\r\nContent-Length: ${30 * 1024 * 1024}\r\n\r\n`,
    );
    // 20 MB, then the body stalls (a slow client) with the rest unsent.
    const chunk = Buffer.alloc(1024 * 1024, 0x63);
    for (let i = 0; i < sent / chunk.length; i++) {
      if (!socket.write(chunk)) await new Promise((r) => socket.once('drain', r));
    }
    const partSize = async () => {
      let size = 0;
      for (const f of (await readdir(tmp)).filter((n) => n.endsWith('.part'))) {
        size += (await stat(join(tmp, f)).catch(() => ({ size: 0 }))).size;
      }
      return size;
    };
    const deadline = Date.now() + 30_000;
    while ((await partSize()) < sent && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const before = await partSize();
    await s.kill();
    socket.destroy();
    const leftBehind = (await readdir(tmp)).filter((n) => n.endsWith('.part')).length;
    s = await serve(env);
    const after = (await readdir(tmp)).filter((n) => n.endsWith('.part'));
    const shown = await call(s.port, 'GET', `/api/v1/upload/${up.uploadId}`, keys.calls);
    figure('crash_upload_part_bytes_at_kill', before);
    figure('crash_upload_part_files_after_kill', leftBehind);
    figure('crash_upload_part_files_after_restart', after.length);
    figure('crash_upload_status_after_restart', (shown.body as { status: string }).status);
    assert.ok(before >= sent, `the .part file held ${before} bytes at the kill`);
    assert.equal(leftBehind, 1, 'kill -9 left the .part file');
    assert.deepEqual(after, []);
    assert.equal((shown.body as { status: string }).status, 'pending');
    assert.equal(existsSync(join(dataDir, 'objects', up.objectKey)), false);
  });
});

describe('a flood of failed authentications from one address (issue 18)', {
  skip: !process.env.TEST_DATABASE_URL,
}, () => {
  it('answers 429 with Retry-After past AUTH_FAILURE_MAX, with no key look-up, and lets others in', async () => {
    const db = await createPostgresDatabase();
    const dataDir = await tempDir('cqs-authflood-');
    const port = await freePort();
    const url = new URL(db.url);
    const proxy = await tapProxy(port, new URL(db.url));
    url.port = String(port);
    const env = {
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      DATABASE_URL: url.toString(),
      TRUST_PROXY: '127.0.0.1',
    };
    const keys = await seedCompany(env, dataDir, 'flood');
    const s = await serve(env);
    try {
      const flood = Array.from({ length: 1200 }, () => generateApiKey());
      const counts = { 401: 0, 429: 0, other: 0, noRetryAfter: 0 };
      const from = { 'x-forwarded-for': '198.51.100.7' };
      const started = performance.now();
      let next = 0;
      const worker = async () => {
        while (next < flood.length) {
          const key = flood[next++] as string;
          const r = await send(s.port, 'GET', '/api/v1/product/list', { key, headers: from });
          if (r.status === 401) counts[401]++;
          else if (r.status === 429) {
            counts[429]++;
            if (!(Number(r.headers?.get('retry-after')) > 0)) counts.noRetryAfter++;
          } else counts.other++;
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      const seconds = (performance.now() - started) / 1000;
      const other = await send(s.port, 'GET', '/api/v1/product/list', {
        key: keys.calls,
        headers: { 'x-forwarded-for': '198.51.100.8' },
      });
      const same = await send(s.port, 'GET', '/api/v1/product/list', { key: keys.calls, headers: from });
      // Each look-up sends the key's hash to PostgreSQL: count the flood's hashes on the wire.
      const wire = new Set(proxy.text().match(/[0-9a-f]{64}/g) ?? []);
      const lookups = flood.filter((k) => wire.has(hashApiKey(k))).length;
      const logged = new Set(s.output().match(/[0-9a-f]{64}|cqs_[0-9A-Za-z]+/g) ?? []);
      const leaks = flood.filter((k) => logged.has(k) || logged.has(hashApiKey(k))).length;
      figure('auth_flood_requests', flood.length);
      figure('auth_flood_401', counts[401]);
      figure('auth_flood_429', counts[429]);
      figure('auth_flood_other', counts.other);
      figure('auth_flood_429_without_retry_after', counts.noRetryAfter);
      figure('auth_flood_key_lookups', lookups);
      figure('auth_flood_seconds', seconds.toFixed(2));
      figure('auth_flood_valid_key_other_address_status', other.status);
      figure('auth_flood_valid_key_same_address_status', same.status);
      figure('auth_flood_keys_or_hashes_in_logs', leaks);
      // AUTH_FAILURE_MAX is 30: one process runs no more look-ups at once than the address may still fail.
      assert.equal(counts[401], 30, `${counts[401]} × 401`);
      assert.equal(counts[401] + counts[429], flood.length, JSON.stringify(counts));
      assert.equal(counts.noRetryAfter, 0);
      assert.equal(lookups, counts[401], 'only the 401s looked their key up');
      assert.equal(other.status, 200);
      assert.equal(same.status, 429);
      assert.equal(leaks, 0);
    } finally {
      await s.kill();
      await proxy.close();
      await rm(dataDir, { recursive: true, force: true });
      await db.drop();
    }
  });
});
