/**
 * Transcriptions run in slots of their own (TRANSCRIBER_CONCURRENCY), apart from verification, analysis and
 * the sweeps: an engine may take TRANSCRIBER_TIMEOUT per request, and when transcriptions shared the
 * worker's two slots, two of them waiting on a slow engine held a new upload unverified until they ended
 * (38 s in the review, with the timeout lowered to 20 s; 600 s by default).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createCallWithRecording } from './helpers/calls.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { type Harness, startHarness } from './helpers/harness.ts';
import {
  type FakeTranscriptionServer,
  startFakeTranscriptionServer,
} from './helpers/openai-transcription-server.ts';

/** How long the engine thinks: longer than a verification may take here by far. */
const ENGINE_DELAY_MS = 12_000;

describe('transcriptions waiting on a slow engine', () => {
  let dir: string;
  let tone: Buffer;
  let engine: FakeTranscriptionServer;
  let h: Harness;
  let c: TestCompany;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cqs-slots-'));
    const path = join(dir, 'tone.wav');
    execFileSync('sox', [
      '-n',
      '-r',
      '16000',
      '-c',
      '1',
      path,
      'synth',
      '2',
      'sine',
      '440',
      'vol',
      '0.5',
      'pad',
      '0.5',
      '0.5',
    ]);
    tone = await readFile(path);
    engine = await startFakeTranscriptionServer();
    engine.delayMs = ENGINE_DELAY_MS;
    h = await startHarness(
      'pglite',
      {
        TRANSCRIBER: 'openai',
        TRANSCRIBER_URL: engine.url,
        TRANSCRIBER_TIMEOUT: '120',
        WORKER_CONCURRENCY: '2',
        TRANSCRIBER_CONCURRENCY: '2',
        WORKER_POLL_INTERVAL: '50',
        SHUTDOWN_TIMEOUT: '0',
      },
      { worker: true },
    );
    c = await h.company();
  });
  after(async () => {
    await h.close();
    await engine.close();
    await rm(dir, { recursive: true, force: true });
  });

  const send = async (conversationId: string) =>
    createCallWithRecording(h, c, { conversationId, filename: 'tone.wav', contentType: 'audio/wav' }, tone);

  it('do not hold up the verification of a new upload', async () => {
    await send('slow-1');
    await send('slow-2');
    for (let waited = 0; engine.received.length < 2; waited += 50) {
      assert.ok(waited < 30_000, `the engine got ${engine.received.length} requests`);
      await sleep(50);
    }
    const started = Date.now();
    const third = await send('quick-3');
    let status = '';
    while (Date.now() - started < ENGINE_DELAY_MS / 2) {
      const res = await h.request({ method: 'GET', url: `/api/v1/upload/${third}`, key: c.key });
      status = (res.json() as { status: string }).status;
      if (status === 'ready') break;
      await sleep(100);
    }
    assert.equal(
      status,
      'ready',
      `not verified within ${ENGINE_DELAY_MS / 2000} s while two transcriptions wait on the engine`,
    );
  });
});
