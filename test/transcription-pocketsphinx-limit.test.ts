/**
 * A pocketsphinx run covers a whole channel at about a third of real time, so its time limit grows with the
 * channel: TRANSCRIBER_TIMEOUT per started 10 minutes. A fixed limit failed every channel longer than half
 * an hour at the default 600 s. A stand-in recogniser that takes 1.5 s shows it here, with a 1 s limit.
 */
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createPocketsphinxEngine } from '../src/adapters/transcribe/pocketsphinx.ts';

describe('the time limit of a pocketsphinx run', () => {
  let dir: string;
  let binary: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cqs-ps-limit-'));
    binary = join(dir, 'slow-recogniser');
    // Prints one word, as pocketsphinx_continuous -time yes does, after 1.5 s.
    await writeFile(
      binary,
      '#!/bin/sh\nsleep 1.5\necho "<s> 0.00 0.10 1.000000"\necho "hello 0.10 0.60 0.900000"\necho "</s> 0.60 0.70 1.000000"\n',
    );
    await chmod(binary, 0o755);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('is TRANSCRIBER_TIMEOUT per started 10 minutes of the channel', async () => {
    const engine = createPocketsphinxEngine({ binary, concurrency: 1, timeoutMs: 1000 });
    const channel = (durationS: number) => ({ wavPath: join(dir, 'unused.wav'), durationS, speech: [] });
    // 20 minutes of channel: 2 s.
    const segments = await engine.transcribe(channel(1200));
    assert.deepEqual(
      segments.flatMap((s) => s.words?.map((w) => w.word) ?? []),
      ['hello'],
    );
    // 5 minutes: 1 s, which the run outlasts.
    await assert.rejects(engine.transcribe(channel(300)), /pocketsphinx took longer than 1 s/);
  });
});
