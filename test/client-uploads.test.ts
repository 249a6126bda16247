/**
 * @cqs/client's uploads when the storage says no: its early refusals reach the caller (nodePut waits for
 * `100 Continue`), a failed write is retried once, a PUT through fetch closes its file, the size limit is
 * checked before the call is made, Retry-After is honoured, and a failure after the call was made names it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, open, readdir, readlink, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  CqsClient,
  CqsError,
  fetchPut,
  MAX_UPLOAD_BYTES,
  type PutFunction,
  type UploadUrlResponse,
} from '../packages/client/src/index.ts';
import { CqsNodeClient, fileSource, nodePut } from '../packages/client/src/node.ts';
import { prepareBody } from '../packages/client/src/source.ts';
import { putRecording } from '../packages/client/src/upload.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import type { Harness } from './helpers/harness.ts';
import { startListening } from './helpers/listening.ts';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** How many of this process's descriptors are open on `path` (Linux's /proc). */
async function openOn(path: string): Promise<number> {
  let count = 0;
  for (const fd of await readdir('/proc/self/fd')) {
    if ((await readlink(`/proc/self/fd/${fd}`).catch(() => '')) === path) count++;
  }
  return count;
}

/** A stream of `size` zero bytes made as it is read; `pulled()` says how many were read. */
function zeros(size: number): { stream: ReadableStream<Uint8Array>; pulled(): number } {
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const n = Math.min(1 << 20, size - sent);
      if (n <= 0) return controller.close();
      sent += n;
      controller.enqueue(new Uint8Array(n));
    },
  });
  return { stream, pulled: () => sent };
}

/** A PUT that sends another Content-Type than the URL was signed for: the storage refuses it at once. */
const wrongType =
  (put: PutFunction): PutFunction =>
  (url, init) =>
    put(url, { ...init, headers: { ...init.headers, 'content-type': 'audio/mpeg' } });

/** The last attempt onProgress reported. */
function attempts(): { onProgress: (p: { attempt: number }) => void; count(): number } {
  let last = 0;
  return { onProgress: (p) => (last = p.attempt), count: () => last };
}

/** A local HTTP server for the cases the service does not make; its URL and its requests' times. */
async function localServer(
  handler: (req: IncomingMessage, res: ServerResponse, n: number) => void,
): Promise<{ url: string; hits: number[]; close(): Promise<void> }> {
  const hits: number[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(Date.now());
    handler(req, res, hits.length);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** An upload as call/create answers it, pointing at `url`. */
function fakeUpload(url: string, expiresIn = 3600): UploadUrlResponse {
  return {
    upload_id: 1,
    conversation_id: 'c',
    upload_url: url,
    expires_in: expiresIn,
    upload_content_type: 'audio/wav',
  };
}

describe('client uploads the storage refuses', () => {
  let h: Harness;
  let baseUrl: string;
  let c: TestCompany;
  let dir: string;
  let file: string;
  const size = 100_000_000;
  before(async () => {
    ({ h, baseUrl } = await startListening('pglite'));
    c = await h.company();
    dir = await mkdtemp(join(tmpdir(), 'cqs-client-uploads-'));
    file = join(dir, 'big.wav');
    // 100 MB of zeros, sparse: the storage refuses it for its type before it reads a byte.
    const handle = await open(file, 'w');
    await handle.truncate(size);
    await handle.close();
  });
  after(async () => {
    await h.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function createUpload(): Promise<UploadUrlResponse> {
    const client = new CqsClient({ baseUrl, apiKey: c.key });
    return (await client.createCall({
      agent_email: c.agent.email,
      product_id: c.productId,
      filename: 'call.wav',
    })) as UploadUrlResponse;
  }

  it("nodePut answers the storage's early 403 and 400 (not EPIPE), having sent almost nothing", async () => {
    for (let i = 0; i < 3; i++) {
      const upload = await createUpload();
      const source = await fileSource(file);
      const refused = await nodePut(upload.upload_url, {
        headers: { 'content-type': 'audio/mpeg', 'content-length': String(size) },
        body: source.open(),
      });
      assert.equal(refused.status, 403, refused.text);
      assert.match(refused.text, /<Code>SignatureDoesNotMatch<\/Code>/);

      const body = zeros(MAX_UPLOAD_BYTES);
      const tooLarge = await nodePut(upload.upload_url, {
        headers: { 'content-type': upload.upload_content_type, 'content-length': String(MAX_UPLOAD_BYTES) },
        body: body.stream,
      });
      assert.equal(tooLarge.status, 400, tooLarge.text);
      assert.match(tooLarge.text, /<Code>EntityTooLarge<\/Code>/);
      assert.ok(body.pulled() <= 4 << 20, `${body.pulled()} bytes read of the body`);
    }
    assert.equal(await openOn(file), 0, 'the file is closed');
  });

  it("uploadRecording through nodePut throws the storage's refusal after one attempt, naming the call", async () => {
    const tries = attempts();
    const client = new CqsClient({ baseUrl, apiKey: c.key, put: wrongType(nodePut) });
    const error = await client
      .uploadRecording(
        {
          agent_email: c.agent.email,
          product_id: c.productId,
          filename: 'call.wav',
          body: await fileSource(file),
        },
        { onProgress: tries.onProgress },
      )
      .catch((e: unknown) => e);
    assert.ok(error instanceof CqsError, String(error));
    assert.equal(error.status, 403);
    assert.match(error.error, /^SignatureDoesNotMatch/);
    assert.equal(tries.count(), 1);
  });

  it('through fetch, a PUT refused early is tried at most twice, and the file is closed each time', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on('warning', onWarning);
    try {
      for (let i = 0; i < 3; i++) {
        const tries = attempts();
        const client = new CqsClient({ baseUrl, apiKey: c.key, put: wrongType(fetchPut(fetch)) });
        const error = await client
          .uploadRecording(
            {
              agent_email: c.agent.email,
              product_id: c.productId,
              filename: 'call.wav',
              body: await fileSource(file),
            },
            { onProgress: tries.onProgress },
          )
          .catch((e: unknown) => e);
        // fetch sees the 403 when it reads it before its write fails, else only the write's EPIPE.
        const epipe = /EPIPE|ECONNRESET/.test(`${(error as Error).cause ?? ''}`);
        assert.ok((error instanceof CqsError && error.status === 403) || epipe, String(error));
        assert.ok(tries.count() <= 2, `${tries.count()} attempts`);
      }
      // A stream left open is closed by the collector, with a warning: give it the chance to.
      for (let i = 0; i < 20 && (await openOn(file)) > 0; i++) await sleep(100);
      collectGarbage();
      await sleep(200);
      assert.equal(await openOn(file), 0, 'no descriptor left open on the file');
      assert.deepEqual(
        warnings.filter((w) => /garbage collection/.test(w)),
        [],
      );
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('a PUT whose connection is reset while the body is written is retried once, not five times', async () => {
    const server = await localServer((req) => req.socket.resetAndDestroy());
    try {
      const source = await fileSource(file);
      const error = await putRecording(
        { baseUrl, apiKey: c.key, fetch },
        fakeUpload(`${server.url}/put`),
        prepareBody(source),
      ).catch((e: unknown) => e);
      assert.match(`${(error as Error).cause}`, /ECONNRESET|EPIPE/);
      assert.equal(server.hits.length, 2);
    } finally {
      await server.close();
    }
  });

  it('uploadRecording refuses 250,000,000 bytes or more, or none, before it creates the call', async () => {
    let requests = 0;
    let puts = 0;
    const client = new CqsClient({
      baseUrl,
      apiKey: c.key,
      fetch: (input, init) => {
        requests++;
        return fetch(input, init);
      },
      put: async (_url, init) => {
        puts++;
        if (init.body instanceof ReadableStream) await init.body.cancel();
        return { status: 400, text: '<Error><Code>EntityTooLarge</Code></Error>' };
      },
    });
    const call = { agent_email: c.agent.email, product_id: c.productId, filename: 'huge.wav' };
    const source = (bytes: number) => ({ size: bytes, open: () => zeros(bytes).stream });
    for (const bytes of [MAX_UPLOAD_BYTES, MAX_UPLOAD_BYTES + 1, 300_000_000]) {
      await assert.rejects(
        client.uploadRecording({ ...call, body: source(bytes) }),
        (e: Error) => e instanceof RangeError && e.message.includes(String(bytes)),
      );
    }
    for (const body of [source(0), new Uint8Array(0)]) {
      await assert.rejects(
        client.uploadRecording({ ...call, body }),
        (e: Error) => e instanceof RangeError && e.message.includes('empty (0 bytes)'),
      );
    }
    assert.equal(requests, 0, 'no call was created');
    // One byte less is under the limit: the call is made and the PUT tried (here it is refused).
    await assert.rejects(client.uploadRecording({ ...call, body: source(MAX_UPLOAD_BYTES - 1) }), CqsError);
    assert.equal(requests, 1);
    assert.equal(puts, 1);
  });

  it('an error after the call was created carries its upload_id and conversation_id', async () => {
    const client = new CqsNodeClient({
      baseUrl,
      apiKey: c.key,
      put: async () => ({ status: 403, text: '<Error><Code>AccessDenied</Code></Error>' }),
    });
    const error = await client
      .uploadRecording({
        agent_email: c.agent.email,
        product_id: c.productId,
        filename: 'call.wav',
        body: new Uint8Array(1000),
      })
      .catch((e: unknown) => e);
    assert.ok(error instanceof CqsError);
    assert.equal(error.status, 403);
    const ref = error.upload;
    assert.ok(ref, 'the error names the upload');
    // The conversation_id was made up by the service: without it the call could only be found by media.
    assert.equal((await client.getUpload(ref.upload_id)).status, 'pending');
    const { key } = await c.addKey(c.admin.id, ['calls:read']);
    const reader = new CqsClient({ baseUrl, apiKey: key });
    const found = [];
    for await (const call of reader.listCalls({ conversation_id: ref.conversation_id })) found.push(call);
    assert.equal(found.length, 1);
  });
});

describe("putRecording honours the storage's Retry-After", () => {
  const body = prepareBody(new Uint8Array(1000));
  const transport = { baseUrl: 'http://127.0.0.1:1', apiKey: 'k', fetch };

  for (const [form, header] of [
    ['seconds', () => '2'],
    ['an HTTP-date', () => new Date(Date.now() + 4000).toUTCString()],
  ] as const) {
    it(`waits what a 503's Retry-After (${form}) asks before the next attempt`, async () => {
      const server = await localServer((req, res, n) => {
        req.resume();
        if (n === 1)
          res.writeHead(503, { 'retry-after': header() }).end('<Error><Code>SlowDown</Code></Error>');
        else res.writeHead(200).end();
      });
      try {
        for (const put of [nodePut, undefined]) {
          server.hits.length = 0;
          await putRecording(
            { ...transport, ...(put ? { put } : {}) },
            fakeUpload(`${server.url}/put`),
            body,
          );
          assert.equal(server.hits.length, 2);
          const gap = (server.hits[1] ?? 0) - (server.hits[0] ?? 0);
          // The back-off alone waits under 1 s here; an HTTP-date counts whole seconds.
          assert.ok(gap >= 1900, `${gap} ms between the attempts`);
        }
      } finally {
        await server.close();
      }
    });
  }

  it('gives up at once when Retry-After asks to wait past the URL’s expiry, saying what it asked', async () => {
    const server = await localServer((req, res) => {
      req.resume();
      res.writeHead(503, { 'retry-after': '600' }).end('<Error><Code>SlowDown</Code></Error>');
    });
    try {
      const started = Date.now();
      const error = await putRecording(transport, fakeUpload(`${server.url}/put`, 60), body).catch(
        (e: unknown) => e,
      );
      assert.ok(error instanceof CqsError);
      assert.equal(error.status, 503);
      assert.equal(error.retryAfterMs, 600_000);
      assert.equal(server.hits.length, 1);
      assert.ok(Date.now() - started < 10_000);
    } finally {
      await server.close();
    }
  });
});
