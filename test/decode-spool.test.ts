/**
 * The decoder copies a recording that ffmpeg must seek in (mp4, mov, …) to a temporary folder first; a
 * read of the object that fails during that copy leaves no partial copy of the recording behind.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { decodePcm, findDecoder } from '../src/adapters/decode/ffmpeg.ts';
import type { ObjectReader } from '../src/adapters/storage/storage.ts';
import { bytesReader } from './helpers/bytes-reader.ts';
import { writeStereoWav } from './helpers/wav.ts';

it('removes its copy of the recording when reading the object fails midway', async () => {
  // A temporary folder of this test's own (os.tmpdir() reads TMPDIR each time), so no other decode counts.
  const folder = await mkdtemp(join(tmpdir(), 'cqs-decode-test-'));
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = folder;
  try {
    let reads = 0;
    const reader = {
      size: 4 * 1024 * 1024,
      async read(_offset: number, length: number) {
        if (++reads > 2) throw new Error('the storage failed');
        return new Uint8Array(length).fill(7);
      },
      async close() {},
    } as unknown as ObjectReader;
    const decoder = { source: 'system' as const, path: '/bin/false', version: 'none' };
    await assert.rejects(async () => {
      for await (const _ of decodePcm(decoder as never, reader, {
        channels: 1,
        sampleRate: 16000,
        container: 'mp4',
      })) {
        // Nothing is decoded: the copy fails first.
      }
    }, /the storage failed|reading the object failed/);
    assert.ok(reads > 2, 'the copy had begun');
    assert.deepEqual(await readdir(folder), []);
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    await rm(folder, { recursive: true, force: true });
  }
});

it('reads a spooled recording as the mov family only, never as a playlist of other files', async () => {
  const decoder = findDecoder(undefined);
  assert.ok(decoder, 'ffmpeg is installed (the npm build)');
  const folder = await mkdtemp(join(tmpdir(), 'cqs-decode-test-'));
  try {
    // Another recording on this host (another company's, say), and bytes the probe took for an mp4 but
    // that are an HLS playlist naming it.
    const other = join(folder, 'other.wav');
    await writeStereoWav(other, 200_000);
    const playlist = Buffer.from(
      `#EXTM3U\n#EXT-X-TARGETDURATION:30\n#EXTINF:30,\nfile://${other}\n#EXT-X-ENDLIST\n`,
    );
    const reader = bytesReader(playlist);
    let samples = 0;
    const decoding = (async () => {
      for await (const frame of decodePcm(decoder, reader, {
        channels: 1,
        sampleRate: 8000,
        container: 'mp4',
      })) {
        samples += frame.length;
      }
    })();
    // Read as a playlist, the other file's 25,000 samples came out as this recording's.
    await assert.rejects(decoding);
    assert.equal(samples, 0);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});
