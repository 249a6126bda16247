/**
 * The `openai` engine against a local server of the OpenAI transcription API (test/helpers/
 * openai-transcription-server.ts): the multipart fields it sends, 429 with Retry-After, a channel larger
 * than TRANSCRIBER_MAX_BYTES cut in pauses, errors that are and are not worth a retry; then end to end
 * through HTTP on both databases, and a client transcript arriving while a transcription runs.
 */
import assert from 'node:assert/strict';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { and, desc, eq } from 'drizzle-orm';
import { placeSpeech } from '../scripts/transcription-set.ts';
import { conversations, jobs, uploads } from '../src/adapters/db/schema.ts';
import { findDecoder } from '../src/adapters/decode/ffmpeg.ts';
import { createOpenAiEngine, cutAtPauses } from '../src/adapters/transcribe/openai.ts';
import { wavHeader } from '../src/adapters/transcribe/wav.ts';
import { type ChannelAudio, TranscriptionError } from '../src/domain/transcription/engine.ts';
import { queueTranscription, runTranscription } from '../src/domain/transcription/transcription.ts';
import { BACKENDS, startHarness } from './helpers/harness.ts';
import { pathOf } from './helpers/media.ts';
import {
  type FakeTranscriptionServer,
  loudRuns,
  startFakeTranscriptionServer,
} from './helpers/openai-transcription-server.ts';

let dir: string;
let server: FakeTranscriptionServer;
let long: ReturnType<typeof placeSpeech>;
let audio: ChannelAudio;

const SCRIPT = [
  { channel: 0, text: 'thank you for calling how can I help you today', at: 0.5 },
  { channel: 0, text: 'I would like to check the status of my order', at: 4.4 },
  { channel: 0, text: 'can you give me the order number please', at: 8.3 },
  { channel: 0, text: 'it is four five seven two one nine', at: 12.0 },
  { channel: 0, text: 'the package left our warehouse yesterday', at: 15.2 },
] as const;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cqs-openai-'));
  server = await startFakeTranscriptionServer();
  long = placeSpeech(dir, 'long', SCRIPT, { channels: 1 });
  audio = {
    wavPath: long.path,
    durationS: long.durationS,
    speech: long.placed.map((p) => ({ start: p.at, stop: p.stop })),
  };
});
after(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

const engineOf = (maxBytes = 25 * 1024 * 1024, attempts?: number) =>
  createOpenAiEngine({
    url: server.url,
    apiKey: 'sk-test',
    model: 'whisper-test',
    concurrency: 2,
    timeoutMs: 10_000,
    maxBytes,
    ...(attempts ? { attempts } : {}),
  });

function assertTimes(segments: { start: number; stop: number }[]) {
  assert.equal(segments.length, long.placed.length, JSON.stringify(segments));
  long.placed.forEach((p, i) => {
    const s = segments[i] as { start: number; stop: number };
    assert.ok(
      Math.abs(s.start - p.at) <= 0.5 && Math.abs(s.stop - p.stop) <= 0.5,
      `${JSON.stringify(s)} vs ${p.at}–${p.stop}`,
    );
  });
}

describe('openai engine protocol', () => {
  it('sends the documented multipart fields and reads verbose_json segments and words', async () => {
    server.received.length = 0;
    const segments = await engineOf().transcribe(audio);
    assert.equal(server.received.length, 1);
    const [req] = server.received;
    assert.equal(req?.authorization, 'Bearer sk-test');
    assert.match(req?.contentType ?? '', /^multipart\/form-data; boundary=/);
    assert.deepEqual(req?.fields, {
      model: ['whisper-test'],
      response_format: ['verbose_json'],
      'timestamp_granularities[]': ['segment', 'word'],
    });
    assert.equal(req?.file?.name, 'audio.wav');
    assert.equal(req?.file?.type, 'audio/wav');
    const wav = req?.file?.bytes as Buffer;
    assert.equal(wav.toString('latin1', 0, 4), 'RIFF');
    assert.equal(wav.readUInt16LE(22), 1, 'mono');
    assert.equal(wav.readUInt32LE(24), 16000, '16 kHz');
    assertTimes(segments);
    assert.equal(segments[0]?.text, 'speech 0');
    assert.equal(segments[0]?.words?.length, 2);
    assert.ok(Math.abs((segments[0]?.confidence ?? 0) - Math.exp(-0.25)) < 1e-9);
  });

  it("waits for a slow server as long as its own timeout says, not as long as Node's fetch would", async () => {
    // Node's fetch gives up waiting for headers after its dispatcher's headersTimeout (300 s), whatever the
    // request's signal says: a TRANSCRIBER_TIMEOUT of 600 s failed at 300 s. Made 1 s here to see it.
    const { Agent, getGlobalDispatcher, setGlobalDispatcher } = await import('undici');
    const global = getGlobalDispatcher();
    setGlobalDispatcher(new Agent({ headersTimeout: 1000 }));
    server.delayMs = 2000;
    try {
      assertTimes(await engineOf().transcribe(audio));
    } finally {
      server.delayMs = 0;
      setGlobalDispatcher(global);
    }
  });

  it('waits the Retry-After of a 429, then retries', async () => {
    server.received.length = 0;
    server.script.push({ status: 429, headers: { 'retry-after': '1' } });
    const segments = await engineOf().transcribe(audio);
    assert.equal(server.received.length, 2);
    const [first, second] = server.received;
    assert.ok((second?.at ?? 0) - (first?.at ?? 0) >= 950, 'waited the Retry-After');
    assertTimes(segments);
  });

  it('cuts a channel larger than the limit in pauses, into several requests', async () => {
    server.received.length = 0;
    const maxBytes = 200_000; // 6.2 s of 16 kHz audio; the channel is 19 s
    const segments = await engineOf(maxBytes).transcribe(audio);
    assert.ok(server.received.length >= 3, `${server.received.length} requests`);
    for (const req of server.received) {
      const wav = req.file?.bytes as Buffer;
      assert.ok(wav.length <= maxBytes, `${wav.length} bytes`);
      // No sentence is cut: each piece starts and ends in silence.
      const runs = loudRuns(wav);
      const seconds = (wav.length - 44) / 32000;
      assert.ok(runs.length > 0 && (runs[0]?.start ?? 0) > 0.05 && seconds - (runs.at(-1)?.end ?? 0) > 0.05);
    }
    assertTimes(segments);
  });

  it('reads a piece of a channel only when its request may start (TRANSCRIBER_CONCURRENCY)', async () => {
    // 10 minutes of channel (19.2 MB) in pieces of at most 1 MB, one request at a time.
    const minutes = 10;
    const path = join(dir, 'memory.wav');
    const second = Buffer.alloc(32_000, 1);
    // Written a second at a time: no 19 MB buffer to be collected while the test measures.
    const file = await open(path, 'w');
    await file.write(wavHeader(minutes * 60 * 16_000, 1, 16_000));
    for (let n = 0; n < minutes * 60; n++) await file.write(second);
    await file.close();
    const speech = Array.from({ length: minutes * 30 }, (_, n) => ({ start: n * 2, stop: n * 2 + 1 }));
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let firstArrived: () => void = () => {};
    const arrived = new Promise<void>((resolve) => {
      firstArrived = resolve;
    });
    const slow = createServer(async (req, res) => {
      for await (const _ of req);
      firstArrived();
      await held;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"segments":[]}');
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    try {
      const engine = createOpenAiEngine({
        url: `http://127.0.0.1:${(slow.address() as AddressInfo).port}`,
        apiKey: undefined,
        model: 'm',
        concurrency: 1,
        timeoutMs: 60_000,
        maxBytes: 1024 * 1024,
      });
      const before = process.memoryUsage().arrayBuffers;
      const running = engine.transcribe({ wavPath: path, durationS: minutes * 60, speech });
      await arrived;
      // The first request is held: read ahead, every piece was in memory by now (19 MB).
      const grown = process.memoryUsage().arrayBuffers - before;
      release();
      await running;
      assert.ok(grown < 8e6, `${(grown / 1e6).toFixed(1)} MB read while one request ran`);
    } finally {
      release();
      slow.close();
    }
  });

  it('cuts where speech pauses, and at the limit only inside speech too long for it', () => {
    const pieces = cutAtPauses(
      20,
      [
        { start: 1, stop: 4 },
        { start: 5, stop: 9 },
        { start: 10, stop: 19 },
      ],
      8,
    );
    assert.deepEqual(pieces[0], { start: 0, stop: 4.5 });
    assert.ok(pieces.every((p) => p.stop - p.start <= 8));
    assert.equal(pieces.at(-1)?.stop, 20);
  });

  it('says which failures are worth a retry', async () => {
    server.script.push({ status: 400, body: '{"error":{"message":"bad model"}}' });
    await assert.rejects(engineOf().transcribe(audio), (e: unknown) => {
      assert.ok(e instanceof TranscriptionError && !e.transient && /400/.test(e.message));
      return true;
    });
    server.script.push({ status: 503 }, { status: 503 });
    await assert.rejects(engineOf(undefined, 2).transcribe(audio), (e: unknown) => {
      assert.ok(e instanceof TranscriptionError && e.transient);
      return true;
    });
    const closed = createOpenAiEngine({
      url: 'http://127.0.0.1:9',
      apiKey: undefined,
      model: 'm',
      concurrency: 1,
      timeoutMs: 5000,
      maxBytes: 1 << 20,
    });
    await assert.rejects(
      closed.transcribe(audio),
      (e: unknown) => e instanceof TranscriptionError && e.transient,
    );
  });
});

for (const backend of BACKENDS) {
  describe(`openai engine end to end (${backend})`, () => {
    it('transcribes a stereo call by channel and keeps a client transcript that arrives meanwhile', async () => {
      const h = await startHarness(backend, {
        TRANSCRIBER: 'openai',
        TRANSCRIBER_URL: `${server.url}/v1`,
        TRANSCRIBER_MODEL: 'whisper-test',
      });
      try {
        const c = await h.company();
        const reader = await c.addKey(c.admin.id, ['calls:read']);
        const stereo = placeSpeech(dir, 'stereo', [
          { channel: 0, text: 'thank you for calling how can I help you today', at: 0.6 },
          { channel: 1, text: 'I would like to check the status of my order', at: 4.2 },
        ]);
        const create = async (body: Record<string, unknown>) => {
          const res = await h.request({
            method: 'POST',
            url: '/api/v1/call/create',
            key: c.key,
            body: { agent_email: c.agent.email, product_id: c.productId, ...body },
          });
          assert.equal(res.statusCode, 200, res.body);
          return res.json() as { conversation_id: string; upload_url: string; upload_content_type: string };
        };
        const uuidOf = async (conversationId: string) => {
          const [row] = await h.services.database.db
            .select({ id: conversations.id })
            .from(conversations)
            .where(and(eq(conversations.companyId, c.id), eq(conversations.conversationId, conversationId)));
          return row?.id as string;
        };
        const created = await create({
          filename: 'call.wav',
          content_type: 'audio/wav',
          speaker: { separation: 'channels', channel_map: ['agent', 'customer'] },
        });
        const put = await h.app.inject({
          method: 'PUT',
          url: pathOf(created.upload_url),
          headers: { 'content-type': created.upload_content_type },
          payload: await readFile(stereo.path),
        });
        assert.equal(put.statusCode, 200);
        await h.runJobs();
        const id = await uuidOf(created.conversation_id);
        const res = await h.request({ method: 'GET', url: `/api/v1/calls/${id}`, key: reader.key });
        const call = res.json();
        assert.equal(call.transcription.status, 'ready', call.transcription.reason);
        assert.equal(call.transcription.engine, 'openai whisper-test');
        assert.equal(call.transcript_source, 'transcription');
        assert.deepEqual(
          call.transcript.map((s: { role: string }) => s.role),
          ['agent', 'customer'],
        );
        call.transcript.forEach((s: { start: number; stop: number }, i: number) => {
          const p = stereo.placed[i] as { at: number; stop: number };
          assert.ok(Math.abs(s.start - p.at) <= 0.5 && Math.abs(s.stop - p.stop) <= 0.5);
        });

        // A client transcript committed while the engine works wins over the transcription's result.
        const db = h.services.database.db;
        const [upload] = await db
          .select()
          .from(uploads)
          .where(and(eq(uploads.companyId, c.id), eq(uploads.conversationUuid, id)));
        await db.transaction((tx) =>
          queueTranscription(tx, h.services.queue, c.id, id, upload?.id as number),
        );
        const [job] = await db
          .select({ payload: jobs.payload })
          .from(jobs)
          .where(and(eq(jobs.companyId, c.id), eq(jobs.kind, 'call.transcribe')))
          .orderBy(desc(jobs.id))
          .limit(1);
        const clientTranscript = [{ role: 'customer', text: 'from the client', start: 0, stop: 1 }];
        const result = await runTranscription(
          {
            db,
            storage: h.services.storage,
            decoder: findDecoder(),
            engine: {
              name: 'slow',
              async transcribe() {
                await create({ conversation_id: created.conversation_id, transcript: clientTranscript });
                return [{ start: 0, stop: 1, text: 'from the engine' }];
              },
            },
          },
          c.id,
          (job?.payload ?? {}) as Record<string, unknown>,
        );
        assert.equal(result.status, 'failed');
        const after = (
          await h.request({ method: 'GET', url: `/api/v1/calls/${id}`, key: reader.key })
        ).json();
        assert.equal(after.transcript_source, 'client');
        assert.deepEqual(after.transcript, clientTranscript);
        assert.equal(after.transcription.status, 'failed');
        assert.match(after.transcription.reason, /from the client/);
      } finally {
        await h.close();
      }
    });
  });
}
