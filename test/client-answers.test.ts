/**
 * How @cqs/client reads answers: a 2xx that is not JSON is an error, Retry-After (seconds or an HTTP-date,
 * however large) is honoured by every retry loop, the iterators ride out transient failures, listCalls
 * resumes from a cursor, and a waitSeconds the service refuses is refused up front.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { MAX_TIMER_MS, retryAfterMs } from '../packages/client/src/backoff.ts';
import { CqsClient, CqsError, CqsTimeoutError } from '../packages/client/src/index.ts';
import { waitForUpload } from '../packages/client/src/upload.ts';
import { post } from './helpers/calls.ts';
import { settleEvents } from './helpers/events.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { createRecord } from './helpers/handoffs.ts';
import type { Harness } from './helpers/harness.ts';
import { startListening } from './helpers/listening.ts';

const HANDOFF = '00000000-0000-4000-8000-000000000000';

/** A local HTTP server for answers the service does not give; its URL and its requests (path, time). */
async function localServer(
  handler: (req: IncomingMessage, res: ServerResponse, n: number) => void,
): Promise<{ url: string; hits: { path: string; at: number }[]; close(): Promise<void> }> {
  const hits: { path: string; at: number }[] = [];
  const server = createServer((req, res) => {
    hits.push({ path: req.url ?? '', at: Date.now() });
    handler(req, res, hits.length);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

/** Collects the process's warnings while `body` runs. */
async function warningsDuring(body: () => Promise<void>): Promise<string[]> {
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
  process.on('warning', onWarning);
  try {
    await body();
  } finally {
    process.off('warning', onWarning);
  }
  return warnings;
}

describe('client: a 2xx answer that is not JSON', () => {
  let h: Harness;
  let baseUrl: string;
  let c: TestCompany;
  before(async () => {
    ({ h, baseUrl } = await startListening('pglite'));
    c = await h.company();
  });
  after(() => h.close());

  it('is a CqsError naming the status and type, with baseUrl at the web app (which answers HTML)', async () => {
    const client = new CqsClient({ baseUrl: `${baseUrl}/app`, apiKey: c.key });
    const html = (error: unknown) =>
      error instanceof CqsError &&
      error.status === 200 &&
      /expected a JSON answer, got text\/html/.test(error.message);
    await assert.rejects(client.getCall('x'), html);
    await assert.rejects(client.listProducts(), html);
    await assert.rejects(client.getUpload(1), html);
    await assert.rejects(async () => {
      for await (const _ of client.listCalls()) break;
    }, html);
    await assert.rejects(client.waitForFinalHandoff(HANDOFF, { deadline: Date.now() + 5000 }), html);
    // Not retried as if the service were down: the wait for an upload fails at once.
    const started = Date.now();
    await assert.rejects(
      waitForUpload({ baseUrl: `${baseUrl}/app`, apiKey: c.key, fetch }, 1, { timeoutMs: 60_000 }),
      html,
    );
    assert.ok(Date.now() - started < 10_000);
  });

  it('is a CqsError for an empty 200, text/plain and JSON that does not parse; a 204 is no body', async () => {
    const server = await localServer((req, res) => {
      if (req.url?.startsWith('/empty')) res.writeHead(200).end();
      else if (req.url?.startsWith('/text')) res.writeHead(200, { 'content-type': 'text/plain' }).end('OK');
      else if (req.url?.startsWith('/broken'))
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":');
      else res.writeHead(204).end();
    });
    try {
      const at = (path: string) => new CqsClient({ baseUrl: `${server.url}${path}`, apiKey: 'k' });
      await assert.rejects(
        at('/empty').listProducts(),
        (e: Error) => e instanceof CqsError && /empty body/.test(e.message),
      );
      await assert.rejects(
        at('/text').getCall('x'),
        (e: Error) => e instanceof CqsError && /text\/plain: OK/.test(e.message),
      );
      await assert.rejects(
        at('/broken').getCall('x'),
        (e: Error) => e instanceof CqsError && /does not parse/.test(e.message),
      );
      assert.equal(await at('/no-content').deleteCall('x'), undefined);
    } finally {
      await server.close();
    }
  });
});

describe('client: Retry-After', () => {
  it('retryAfterMs reads seconds and HTTP-dates, capped at the longest timer', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(retryAfterMs('5', now), 5000);
    assert.equal(retryAfterMs(' 0 ', now), 0);
    assert.equal(retryAfterMs('Thu, 01 Jan 2026 00:00:19 GMT', now), 19_000);
    assert.equal(retryAfterMs('Wed, 31 Dec 2025 23:00:00 GMT', now), 0, 'a date in the past');
    assert.equal(retryAfterMs('2200000', now), MAX_TIMER_MS);
    assert.equal(retryAfterMs('Fri, 01 Jan 2100 00:00:00 GMT', now), MAX_TIMER_MS);
    for (const bad of [null, undefined, '', '1.5', '-3', 'soon'])
      assert.equal(retryAfterMs(bad, now), undefined);
  });

  it('waitForFinalHandoff waits what Retry-After asks, also past 2^31 ms or as a date, and times out saying the status', async () => {
    let mode = 'huge';
    const server = await localServer((_req, res) => {
      const retryAfter = mode === 'huge' ? '2200000' : new Date(Date.now() + 5000).toUTCString();
      json(res, 429, { error: 'slow down' }, { 'retry-after': retryAfter });
    });
    try {
      const client = new CqsClient({ baseUrl: server.url, apiKey: 'k' });
      for (const m of ['huge', 'date']) {
        mode = m;
        server.hits.length = 0;
        const controller = new AbortController();
        const warnings = await warningsDuring(async () => {
          const waiting = client.waitForFinalHandoff(HANDOFF, { signal: controller.signal });
          await new Promise((resolve) => setTimeout(resolve, 2500));
          controller.abort(new Error('stop'));
          await assert.rejects(waiting, /stop/);
        });
        assert.equal(server.hits.length, 1, `${m}: ${server.hits.length} requests in 2.5 s`);
        assert.deepEqual(
          warnings.filter((w) => /TimeoutOverflow/.test(w)),
          [],
        );
      }
      // The wait stops at the deadline, and says what the last request got.
      mode = 'huge';
      const started = Date.now();
      await assert.rejects(
        client.waitForFinalHandoff(HANDOFF, { deadline: Date.now() + 1500 }),
        (e: Error) => e instanceof CqsTimeoutError && /429 slow down/.test(e.message),
      );
      assert.ok(Date.now() - started < 10_000);
    } finally {
      await server.close();
    }
  });

  it('waitForUpload waits what Retry-After asks, and its timeout keeps the last status read', async () => {
    const server = await localServer((_req, res, n) => {
      if (n === 1) json(res, 429, { error: 'slow down' }, { 'retry-after': '3' });
      else json(res, 200, { upload_id: 7, status: 'ready' });
    });
    const transport = { baseUrl: server.url, apiKey: 'k', fetch };
    try {
      assert.equal((await waitForUpload(transport, 7)).status, 'ready');
      const gap = (server.hits[1]?.at ?? 0) - (server.hits[0]?.at ?? 0);
      assert.ok(gap >= 2900, `${gap} ms after the 429 (Retry-After: 3)`);
    } finally {
      await server.close();
    }
    const flaky = await localServer((_req, res, n) => {
      if (n === 1) json(res, 200, { upload_id: 7, status: 'uploaded' });
      else json(res, 503, { error: 'down' });
    });
    try {
      await assert.rejects(
        waitForUpload({ ...transport, baseUrl: flaky.url }, 7, { timeoutMs: 2000 }),
        (e: Error) =>
          e instanceof CqsTimeoutError && /still uploaded/.test(e.message) && /503 down/.test(e.message),
      );
    } finally {
      await flaky.close();
    }
  });

  it('CqsError carries the Retry-After of the answer', async () => {
    const server = await localServer((_req, res) =>
      json(res, 503, { error: 'down' }, { 'retry-after': '7' }),
    );
    try {
      const error = await new CqsClient({ baseUrl: server.url, apiKey: 'k' }).getCall('x').catch((e) => e);
      assert.ok(error instanceof CqsError);
      assert.equal(error.retryAfterMs, 7000);
    } finally {
      await server.close();
    }
  });
});

describe('client: iterators ride out transient failures; listCalls resumes from a cursor', () => {
  let h: Harness;
  let baseUrl: string;
  let c: TestCompany;
  let readKey: string;
  before(async () => {
    ({ h, baseUrl } = await startListening('pglite'));
    c = await h.company();
    readKey = (await c.addKey(c.admin.id, ['calls:read', 'events:read'])).key;
    for (let i = 0; i < 5; i++) {
      const res = await post(h, c, '/api/v1/call/create', {
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: `it-${i}`,
        start_time: 1_763_985_600 + i,
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    await settleEvents(h);
  });
  after(() => h.close());

  /** A fetch to the service whose `fail(n)` says how the n-th request fails instead (503, network, none). */
  function failing(fail: (n: number) => 'busy' | 'network' | undefined) {
    const times: number[] = [];
    const fetchFn: typeof fetch = async (input, init) => {
      times.push(Date.now());
      const how = fail(times.length);
      if (how === 'network')
        throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') });
      if (how === 'busy') {
        return new Response('{"error":"busy"}', {
          status: 503,
          headers: { 'content-type': 'application/json', 'retry-after': '1' },
        });
      }
      return fetch(input, init);
    };
    return { fetch: fetchFn, times };
  }

  it('listCalls retries a 503 (after its Retry-After) and a network error mid-listing', async () => {
    const f = failing((n) => (n === 2 ? 'busy' : n === 3 ? 'network' : undefined));
    const client = new CqsClient({ baseUrl, apiKey: readKey, fetch: f.fetch });
    const ids = [];
    for await (const call of client.listCalls({}, { pageSize: 2 })) ids.push(call.conversation_id);
    assert.deepEqual(ids, ['it-4', 'it-3', 'it-2', 'it-1', 'it-0']);
    assert.equal(f.times.length, 5);
    const gap = (f.times[2] ?? 0) - (f.times[1] ?? 0);
    assert.ok(gap >= 950, `${gap} ms after the 503 (Retry-After: 1)`);
  });

  it('listCalls gives up after maxRetries transient failures in a row', async () => {
    const f = failing((n) => (n > 1 ? 'busy' : undefined));
    const client = new CqsClient({ baseUrl, apiKey: readKey, fetch: f.fetch });
    const retries: number[] = [];
    const ids: string[] = [];
    await assert.rejects(
      async () => {
        for await (const call of client.listCalls(
          {},
          { pageSize: 2, maxRetries: 1, onRetry: (_e, n) => retries.push(n) },
        )) {
          ids.push(call.conversation_id);
        }
      },
      (e: Error) => e instanceof CqsError && e.status === 503,
    );
    assert.deepEqual(ids, ['it-4', 'it-3']);
    assert.deepEqual(retries, [1]);
    assert.equal(f.times.length, 3);
  });

  it('listCallPages hands over each next_cursor, and listCalls starts after one', async () => {
    const client = new CqsClient({ baseUrl, apiKey: readKey });
    const pages = [];
    for await (const page of client.listCallPages({}, { pageSize: 2 })) pages.push(page);
    assert.deepEqual(
      pages.map((p) => p.calls.map((call) => call.conversation_id)),
      [['it-4', 'it-3'], ['it-2', 'it-1'], ['it-0']],
    );
    assert.equal(pages.at(-1)?.next_cursor, null);
    const cursor = pages[0]?.next_cursor;
    assert.ok(cursor);
    const rest = [];
    for await (const call of client.listCalls({}, { pageSize: 2, cursor })) rest.push(call.conversation_id);
    assert.deepEqual(rest, ['it-2', 'it-1', 'it-0']);
  });

  it('events() keeps following the feed through a 503 and a network error', async () => {
    const f = failing((n) => (n === 1 ? 'busy' : n === 2 ? 'network' : undefined));
    const client = new CqsClient({
      baseUrl,
      apiKey: (await c.addKey(c.admin.id, ['events:read'])).key,
      fetch: f.fetch,
    });
    const stop = new AbortController();
    const seen: string[] = [];
    for await (const page of client.events({
      types: ['call.created'],
      pollIntervalMs: 50,
      signal: stop.signal,
    })) {
      for (const event of page.events) seen.push(String(event.data.conversation_id));
      if (seen.length >= 5) stop.abort();
    }
    assert.deepEqual(seen, ['it-0', 'it-1', 'it-2', 'it-3', 'it-4']);
    const gap = (f.times[1] ?? 0) - (f.times[0] ?? 0);
    assert.ok(gap >= 950, `${gap} ms after the 503 (Retry-After: 1)`);
  });

  it('events() ends, without throwing, when the signal aborts during a retry', async () => {
    const f = failing(() => 'busy');
    const client = new CqsClient({ baseUrl, apiKey: readKey, fetch: f.fetch });
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 300);
    const pages = [];
    for await (const page of client.events({ signal: stop.signal })) pages.push(page);
    assert.deepEqual(pages, []);
    assert.equal(f.times.length, 1);
  });
});

describe('client: waitSeconds outside what the service takes', () => {
  let h: Harness;
  let baseUrl: string;
  let c: TestCompany;
  before(async () => {
    ({ h, baseUrl } = await startListening('pglite'));
    c = await h.company();
  });
  after(() => h.close());

  it('is a RangeError before any request; 0 and 30 are taken', async () => {
    const { id } = await createRecord(h, c);
    let requests = 0;
    const client = new CqsClient({
      baseUrl,
      apiKey: c.key,
      fetch: (input, init) => {
        requests++;
        return fetch(input, init);
      },
    });
    for (const waitSeconds of [60, 31, -1, Number.NaN]) {
      await assert.rejects(
        client.waitForFinalHandoff(id, { waitSeconds, deadline: Date.now() + 3000 }),
        RangeError,
      );
    }
    assert.equal(requests, 0);
    for (const waitSeconds of [0, 30]) {
      const controller = new AbortController();
      const waiting = client.waitForFinalHandoff(id, { waitSeconds, signal: controller.signal });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      controller.abort(new Error('stop'));
      await assert.rejects(waiting, /stop/);
    }
    // A 30 s long poll is one request; polling (0) asks every 0.1–2 s.
    assert.ok(requests >= 2, `${requests} requests`);
  });
});
