/**
 * A transcription fails when one of its channels fails, so the other channel's work is stopped at once
 * rather than finished for nothing: its engine request is abandoned (`openai`), its recogniser killed or
 * never started (`pocketsphinx`).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { placeSpeech } from '../scripts/transcription-set.ts';
import { createPocketsphinxEngine } from '../src/adapters/transcribe/pocketsphinx.ts';
import { TranscriptionError } from '../src/domain/transcription/engine.ts';
import { callDetailOf, createCallWithRecording } from './helpers/calls.ts';
import { within } from './helpers/eventually.ts';
import { BACKENDS, startHarness } from './helpers/harness.ts';
import {
  type FakeTranscriptionServer,
  startFakeTranscriptionServer,
} from './helpers/openai-transcription-server.ts';

let dir: string;
let server: FakeTranscriptionServer;
let stereo: ReturnType<typeof placeSpeech>;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cqs-channel-failure-'));
  server = await startFakeTranscriptionServer();
  stereo = placeSpeech(dir, 'stereo', [
    { channel: 0, text: 'thank you for calling how can I help you today', at: 0.6 },
    { channel: 1, text: 'I would like to check the status of my order', at: 4.2 },
  ]);
});
after(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

for (const backend of BACKENDS) {
  describe(`a channel that fails stops the other (${backend})`, () => {
    it("abandons the other channel's request to the engine", async () => {
      const h = await startHarness(backend, {
        TRANSCRIBER: 'openai',
        TRANSCRIBER_URL: server.url,
        TRANSCRIBER_MODEL: 'whisper-test',
        TRANSCRIBER_CONCURRENCY: '2',
      });
      try {
        const c = await h.company();
        const reader = await c.addKey(c.admin.id, ['calls:read']);
        // One channel's request is refused for good; the other's server thinks for 20 s.
        server.script.push({ status: 400, body: '{"error":{"message":"unreadable audio"}}' });
        server.delayMs = 20_000;
        server.abandoned = 0;
        const conversationId = `failing-${backend}`;
        await createCallWithRecording(
          h,
          c,
          {
            conversationId,
            filename: 'call.wav',
            contentType: 'audio/wav',
            speaker: { separation: 'channels', channel_map: ['agent', 'customer'] },
          },
          await readFile(stereo.path),
        );
        await h.runJobs();
        const call = await callDetailOf(h, reader.key, conversationId);
        assert.equal(call.transcription.status, 'failed');
        assert.match(call.transcription.reason, /400/);
        await within(5000, 'the slow request was abandoned', () => server.abandoned === 1);
      } finally {
        server.delayMs = 0;
        server.script.length = 0;
        await h.close();
      }
    });
  });
}

describe('pocketsphinx, stopped', () => {
  const engine = createPocketsphinxEngine({ concurrency: 1, timeoutMs: 600_000 });
  const channel = () => ({ wavPath: stereo.path, durationS: stereo.durationS, speech: [] });
  const stopped = (error: unknown) => error instanceof TranscriptionError && /stopped/.test(error.message);

  it('does not start a recogniser once stopped', async () => {
    await assert.rejects(engine.transcribe(channel(), AbortSignal.abort()), stopped);
  });

  it('kills a recogniser that runs', async () => {
    const stop = new AbortController();
    const running = engine.transcribe(channel(), stop.signal);
    setTimeout(() => stop.abort(), 100);
    await assert.rejects(running, stopped);
  });
});
