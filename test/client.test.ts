/** @cqs/client against a real listening server (with the worker), on every backend. */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CqsClient, CqsError, CqsTimeoutError, type UploadProgress } from '../packages/client/src/index.ts';
import { CqsNodeClient, fileSource } from '../packages/client/src/node.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { createRecord, finalizeRecord } from './helpers/handoffs.ts';
import { BACKENDS, type Harness } from './helpers/harness.ts';
import { startListening } from './helpers/listening.ts';
import { writeStereoWav } from './helpers/wav.ts';

for (const backend of BACKENDS) {
  describe(`client (${backend})`, () => {
    let h: Harness;
    let baseUrl: string;
    let c: TestCompany;
    let client: CqsClient;
    let dir: string;
    before(async () => {
      ({ h, baseUrl } = await startListening(backend));
      c = await h.company();
      client = new CqsClient({ baseUrl, apiKey: c.key });
      dir = await mkdtemp(join(tmpdir(), 'cqs-client-'));
    });
    after(async () => {
      await h.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('lists products and creates, tags, starts and stops a call', async () => {
      const products = await client.listProducts();
      assert.ok(products.some((p) => p.id === c.productId));
      const created = await client.createCall({
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: 'conv-1',
        transcript: [{ role: 'agent', text: 'Hello', start: 0, stop: 1 }],
      });
      assert.equal((created as { success: boolean }).success, true);
      const tags = [{ key: 'sale', value: true, type: 'boolean' as const }];
      assert.deepEqual(
        await client.addTags({ conversation_id: 'conv-1', agent_email: c.agent.email, tags }),
        { success: true },
      );
      assert.equal(
        (await client.startCall({ conversation_id: 'conv-2', agent_email: c.agent.email })).success,
        true,
      );
      assert.equal(
        (await client.stopCall({ conversation_id: 'conv-2', agent_email: c.agent.email })).success,
        true,
      );
    });

    it("types stopCall with stop's own body: a product_id, which stop refuses, does not type-check", async () => {
      // `npm run typecheck` checks the expectation below: stopCall was typed with start's body, which has
      // product_id, so a client compiled a stop the server answers 422.
      const stop = () =>
        client.stopCall({
          conversation_id: 'conv-2',
          agent_email: c.agent.email,
          // @ts-expect-error stop takes no product_id
          product_id: c.productId,
        });
      await assert.rejects(stop(), (error: unknown) => error instanceof CqsError && error.status === 422);
    });

    it('uploads a stereo WAV from a file with monotonic progress and ends ready', async () => {
      const path = join(dir, 'call.wav');
      const size = await writeStereoWav(path, 3_000_000);
      const progress: UploadProgress[] = [];
      const source = await fileSource(path);
      const { upload, status } = await client.uploadRecording(
        {
          agent_email: c.agent.email,
          product_id: c.productId,
          conversation_id: 'upload-1',
          speaker: { separation: 'channels', channel_map: ['agent', 'customer'] },
          filename: source.filename,
          body: source,
        },
        { onProgress: (p) => progress.push(p) },
      );
      assert.equal(upload.upload_content_type, 'audio/wav');
      assert.equal(status.status, 'ready', JSON.stringify(status));
      assert.equal(status.size, size);
      assert.ok(progress.length > 2);
      for (let i = 1; i < progress.length; i++) {
        assert.ok((progress[i]?.sent ?? 0) >= (progress[i - 1]?.sent ?? 0), 'progress is monotonic');
      }
      assert.deepEqual(progress.at(-1), { sent: size, total: size, attempt: 1 });
    });

    it('CqsNodeClient uploads through node:http with progress', async () => {
      const path = join(dir, 'node.wav');
      const size = await writeStereoWav(path, 2_000_000);
      const sent: number[] = [];
      const nodeClient = new CqsNodeClient({ baseUrl, apiKey: c.key });
      const { status } = await nodeClient.uploadRecording(
        {
          agent_email: c.agent.email,
          product_id: c.productId,
          filename: 'node.wav',
          body: await fileSource(path),
        },
        { onProgress: (p) => sent.push(p.sent) },
      );
      assert.equal(status.status, 'ready');
      assert.equal(sent.at(-1), size);
      assert.deepEqual(
        sent,
        [...sent].sort((a, b) => a - b),
      );
    });

    it('retries a PUT that failed, and a status poll that answered 503', async () => {
      const path = join(dir, 'retry.wav');
      await writeStereoWav(path, 200_000);
      let puts = 0;
      let polls = 0;
      const flaky: typeof fetch = async (input, init) => {
        if (String(input).includes('/api/v1/upload/') && ++polls === 1) {
          return new Response('{"error":"busy"}', { status: 503 });
        }
        if (init?.method === 'PUT' && ++puts === 1) {
          await (init.body as ReadableStream | undefined)?.cancel();
          return new Response('<Error><Code>InternalError</Code></Error>', { status: 500 });
        }
        return fetch(input, init);
      };
      const retrying = new CqsClient({ baseUrl, apiKey: c.key, fetch: flaky });
      const { status } = await retrying.uploadRecording({
        agent_email: c.agent.email,
        product_id: c.productId,
        filename: 'retry.wav',
        body: await fileSource(path),
      });
      assert.equal(puts, 2);
      assert.ok(polls >= 2);
      assert.equal(status.status, 'ready');
    });

    it('uploads bytes and a one-shot stream', async () => {
      const path = join(dir, 'small.wav');
      await writeStereoWav(path, 50_000);
      const source = await fileSource(path);
      const call = { agent_email: c.agent.email, product_id: c.productId, filename: 'small.wav' };
      const chunks: Uint8Array[] = [];
      for await (const chunk of source.open()) chunks.push(chunk);
      const bytes = new Uint8Array(Buffer.concat(chunks));
      assert.equal((await client.uploadRecording({ ...call, body: bytes })).status.status, 'ready');
      const streamed = await client.uploadRecording({ ...call, body: source.open(), size: source.size });
      assert.equal(streamed.status.status, 'ready');
    });

    it('fails the PUT of a stream that does not hold the size given, longer or shorter', async () => {
      const path = join(dir, 'sized.wav');
      await writeStereoWav(path, 400_000);
      const source = await fileSource(path);
      const call = { agent_email: c.agent.email, product_id: c.productId, filename: 'sized.wav' };
      for (const uploader of [client, new CqsNodeClient({ baseUrl, apiKey: c.key })]) {
        // Longer: the server kept the first `size` bytes and the recording came out ready, truncated.
        await assert.rejects(
          uploader.uploadRecording({ ...call, body: source.open(), size: source.size - 200_000 }),
          (e: Error) =>
            `${e.message} ${(e.cause as Error)?.message}`.includes(
              `holds more than ${source.size - 200_000} bytes`,
            ),
        );
        // Shorter: the request waited for the missing bytes until the socket timed out (60 s).
        const started = Date.now();
        await assert.rejects(
          uploader.uploadRecording({ ...call, body: source.open(), size: source.size + 1000 }),
          (e: Error) =>
            `${e.message} ${(e.cause as Error)?.message}`.includes(`ended after ${source.size} bytes`),
        );
        assert.ok(Date.now() - started < 10_000, `${Date.now() - started} ms`);
      }
    });

    it('reports a rejected upload', async () => {
      const bytes = new TextEncoder().encode('this is not audio at all '.repeat(100));
      const { status } = await client.uploadRecording({
        agent_email: c.agent.email,
        product_id: c.productId,
        filename: 'noise.wav',
        body: bytes,
      });
      assert.equal(status.status, 'rejected');
    });

    it('refuses, without quoting it, a key that no header can carry', () => {
      const key = `${c.key.slice(0, 10)}\n${c.key.slice(10)}`;
      assert.throws(
        () => new CqsClient({ baseUrl, apiKey: key }),
        (e: Error) => e instanceof TypeError && !e.message.includes(c.key.slice(4, 10)),
      );
      assert.throws(() => new CqsClient({ baseUrl, apiKey: '' }), TypeError);
    });

    it('throws CqsError with status and error text for a 404', async () => {
      const error = await client.getHandoff('00000000-0000-4000-8000-000000000000').catch((e) => e);
      assert.ok(error instanceof CqsError);
      assert.equal(error.status, 404);
      assert.equal(typeof error.error, 'string');
    });

    it('throws CqsError with the conflicting ids for a 409', async () => {
      const twin1 = await c.addUser('twin@example.test');
      const twin2 = await c.addUser('TWIN@example.test');
      const error = await client
        .createCall({ agent_email: 'twin@example.test', product_id: c.productId })
        .catch((e) => e);
      assert.ok(error instanceof CqsError);
      assert.equal(error.status, 409);
      assert.deepEqual([...(error.conflictingUserIds ?? [])].sort(), [twin1.id, twin2.id].sort());
      assert.equal(error.agentEmail?.toLowerCase(), 'twin@example.test');
    });

    it('waitForFinalHandoff returns soon after another writer (handoff:write key) finalizes', async () => {
      const { id } = await createRecord(h, c, { metadata: { step: 1 } });
      const started = Date.now();
      const waiting = client.waitForFinalHandoff(id);
      await new Promise((r) => setTimeout(r, 300));
      const fin = await finalizeRecord(h, c, id, { step: 2 });
      assert.equal(fin.statusCode, 200);
      const finalizedAt = Date.now();
      const record = await waiting;
      assert.equal(record.final, true);
      assert.deepEqual(record.metadata, { step: 2 });
      assert.ok(Date.now() - finalizedAt < 1500, `returned ${Date.now() - finalizedAt} ms after finalize`);
      assert.ok(Date.now() - started < 5000);
    });

    it('waitForFinalHandoff polls when long polling is off', async () => {
      const { id } = await createRecord(h, c);
      const waiting = client.waitForFinalHandoff(id, { waitSeconds: 0 });
      await new Promise((r) => setTimeout(r, 300));
      await finalizeRecord(h, c, id);
      assert.equal((await waiting).final, true);
    });

    it('waitForFinalHandoff waits calmly for a deadline weeks away', async () => {
      const { id } = await createRecord(h, c);
      let requests = 0;
      const counting = new CqsClient({
        baseUrl,
        apiKey: c.key,
        fetch: (input, init) => {
          requests++;
          return fetch(input, init);
        },
      });
      // 30 and 60 days: past the 2^31 ms a timer takes (it fired at once, or threw a RangeError).
      for (const days of [30, 60]) {
        const controller = new AbortController();
        const waiting = counting.waitForFinalHandoff(id, {
          deadline: Date.now() + days * 86_400_000,
          signal: controller.signal,
        });
        await new Promise((r) => setTimeout(r, 500));
        controller.abort(new Error('stop'));
        await assert.rejects(waiting, /stop/);
      }
      assert.ok(requests <= 2, `${requests} requests in 1 s`);
    });

    it('waitForFinalHandoff honours a deadline and an abort signal', async () => {
      const { id } = await createRecord(h, c);
      const started = Date.now();
      await assert.rejects(client.waitForFinalHandoff(id, { deadline: Date.now() + 1200 }), CqsTimeoutError);
      assert.ok(Date.now() - started < 3000);
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('stop')), 300);
      await assert.rejects(client.waitForFinalHandoff(id, { signal: controller.signal }), /stop/);
    });
  });
}
