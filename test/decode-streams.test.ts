/**
 * A recording with several audio streams is decoded from its first, the one the probe describes (its
 * channels decide how the analysis reads it). ffmpeg by default takes the stream with the most channels.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { decodePcm, findDecoder } from '../src/adapters/decode/ffmpeg.ts';
import { bytesReader } from './helpers/bytes-reader.ts';

it('decodes the first audio stream, not the one with the most channels', async () => {
  const decoder = findDecoder(undefined);
  assert.ok(decoder, 'ffmpeg is installed (the npm build)');
  const folder = await mkdtemp(join(tmpdir(), 'cqs-decode-streams-'));
  try {
    // First stream: 3 s of mono silence; second: a stereo tone of 3 s.
    const path = join(folder, 'two.mkv');
    execFileSync(decoder.path, [
      ...['-loglevel', 'error', '-f', 'lavfi', '-i', 'anullsrc=r=8000:cl=mono'],
      ...['-f', 'lavfi', '-i', 'sine=frequency=440:duration=3:sample_rate=8000'],
      ...['-filter_complex', '[1:a]pan=stereo|c0=c0|c1=c0[s]', '-map', '0:a', '-map', '[s]'],
      ...['-t', '3', '-c:a', 'pcm_s16le', path],
    ]);
    const bytes = await readFile(path);
    const reader = bytesReader(bytes);
    let samples = 0;
    let loudest = 0;
    for await (const frame of decodePcm(decoder, reader, {
      channels: 1,
      sampleRate: 8000,
      container: 'matroska',
    })) {
      samples += frame.length;
      for (const sample of frame) loudest = Math.max(loudest, Math.abs(sample));
    }
    assert.equal(samples, 24_000);
    // The tone's stream reached 4,095.
    assert.equal(loudest, 0);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});
