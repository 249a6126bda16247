/**
 * A decoder that gives nothing is stopped after the stall limit, and the decode fails as stalled (a job
 * retried later), instead of holding its worker's slot for good: a running job's lease is renewed, so a
 * hung or spinning ffmpeg was never taken away from it. Only the time spent waiting on the decoder counts:
 * a caller that holds each chunk longer than the limit is not cut off.
 */
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DecoderStalledError, decodePcm, findDecoder } from '../src/adapters/decode/ffmpeg.ts';
import { wavHeader } from '../src/adapters/transcribe/wav.ts';
import { bytesReader } from './helpers/bytes-reader.ts';

describe('a decoder that gives nothing', () => {
  let folder: string;
  let hung: string;
  before(async () => {
    folder = await mkdtemp(join(tmpdir(), 'cqs-decode-stall-'));
    hung = join(folder, 'hung-ffmpeg');
    // Takes its input and never answers, as a decoder stuck on a file would.
    await writeFile(hung, '#!/bin/sh\nexec sleep 60\n');
    await chmod(hung, 0o755);
  });
  after(() => rm(folder, { recursive: true, force: true }));

  it('is stopped after the stall limit, and the decode fails as stalled', async () => {
    const reader = bytesReader(new Uint8Array(4096));
    const started = performance.now();
    const decode = async () => {
      for await (const _ of decodePcm({ source: 'configured', path: hung, version: 'hung' }, reader, {
        channels: 1,
        sampleRate: 8000,
        container: 'wav',
        stallMs: 500,
      })) {
        // nothing comes
      }
    };
    await assert.rejects(decode(), DecoderStalledError);
    const seconds = (performance.now() - started) / 1000;
    assert.ok(seconds < 10, `stopped after ${seconds.toFixed(1)} s`);
  });

  it('does not count the time the caller holds a chunk', async () => {
    const decoder = findDecoder(undefined);
    assert.ok(decoder, 'ffmpeg is installed (the npm build)');
    // Ten seconds of 8 kHz mono silence as WAV (several pipe reads), each chunk held longer than the limit.
    const pcm = new Uint8Array(160_000);
    const wav = new Uint8Array([...wavHeader(80_000, 1, 8000), ...pcm]);
    let samples = 0;
    let chunks = 0;
    for await (const frame of decodePcm(decoder, bytesReader(wav), {
      channels: 1,
      sampleRate: 8000,
      container: 'wav',
      frameSamples: 1000,
      stallMs: 1500,
    })) {
      samples += frame.length;
      chunks++;
      await sleep(2000);
    }
    assert.equal(samples, 80_000);
    assert.ok(chunks >= 2, `${chunks} chunks`);
  });
});
