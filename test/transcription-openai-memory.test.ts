/**
 * The `openai` engine's memory per request (audit finding 8): a piece is sent from the channel's file on
 * disk (a file-backed Blob), not copied into memory first. Copied into a Uint8Array, then a Blob, then the
 * multipart body, each 25 MB piece cost about 90 MB, and a 60-minute stereo call's RSS went from 194 to 560 MB.
 */
import assert from 'node:assert/strict';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createOpenAiEngine } from '../src/adapters/transcribe/openai.ts';
import { wavHeader } from '../src/adapters/transcribe/wav.ts';

setFlagsFromString('--expose-gc');
/** A full collection, so that what is measured is what is still referenced, not garbage not yet collected. */
const gc = runInNewContext('gc') as () => void;

const RATE = 16_000;
const SECONDS = 600; // 19.2 MB of channel, sent as one piece
let dir: string;
let path: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cqs-openai-memory-'));
  path = join(dir, 'channel.wav');
  const file = await open(path, 'w');
  await file.write(wavHeader(SECONDS * RATE, 1, RATE));
  // Written a second at a time: no 19 MB buffer to be collected while the test measures.
  const second = Buffer.alloc(RATE * 2, 1);
  for (let n = 0; n < SECONDS; n++) await file.write(second);
  await file.close();
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('openai engine memory', () => {
  it('streams a piece from disk: while its request waits for the answer, the piece is not in memory', async () => {
    let bodyBytes = 0;
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let received: () => void = () => {};
    const arrived = new Promise<void>((resolve) => {
      received = resolve;
    });
    // Reads the whole body (counting it, keeping nothing), then holds the answer until the test has measured.
    const server = createServer(async (req, res) => {
      for await (const chunk of req) bodyBytes += (chunk as Buffer).length;
      received();
      await held;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"segments":[]}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const engine = createOpenAiEngine({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        apiKey: undefined,
        model: 'm',
        concurrency: 1,
        timeoutMs: 60_000,
        maxBytes: 24 * 1024 * 1024,
      });
      gc();
      const before = process.memoryUsage().arrayBuffers;
      const running = engine.transcribe({
        wavPath: path,
        durationS: SECONDS,
        speech: [{ start: 1, stop: SECONDS - 1 }],
      });
      await arrived;
      // The least over half a second of the wait: the last chunks' socket writes complete a little after the
      // server has read them; a copied piece stays referenced throughout, until its answer comes.
      let retained = Number.POSITIVE_INFINITY;
      for (let n = 0; n < 10; n++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        gc();
        retained = Math.min(retained, process.memoryUsage().arrayBuffers - before);
      }
      release();
      assert.deepEqual(await running, []);
      assert.ok(bodyBytes > SECONDS * RATE * 2, `the whole piece was sent (${bodyBytes} bytes)`);
      assert.ok(retained < 4e6, `${(retained / 1e6).toFixed(1)} MB held while the request waited`);
    } finally {
      release();
      server.close();
    }
  });
});
