/**
 * Failures of the worker's own files and processes are errors of the job, not of the process: a full disk
 * while the channels are written for an engine (ENOSPC, here /dev/full), and a decoder that cannot be run.
 * Both were uncaught 'error' events that ended the whole service, API and worker together.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { decodePcm } from '../src/adapters/decode/ffmpeg.ts';
import { WavWriter } from '../src/adapters/transcribe/wav.ts';

describe("the worker's files and processes", () => {
  it('throws a full disk from the WAV writer, and the process goes on', {
    skip: !existsSync('/dev/full'),
  }, async () => {
    const writer = new WavWriter('/dev/full', 16_000);
    await assert.rejects(async () => {
      // Small pieces, each taken at once (under the stream's high-water mark), with time between them: the
      // failed write is reported while nothing waits on the stream.
      for (let i = 0; i < 3; i++) {
        await writer.write(new Int16Array(1000));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await writer.close();
    }, /ENOSPC/);
  });

  it('throws a decoder that cannot be run, as an error a later attempt may not have', async () => {
    const bytes = new Uint8Array(1024);
    const reader = {
      size: bytes.length,
      read: async (offset: number, length: number) => bytes.subarray(offset, offset + length),
      close: async () => {},
    };
    const decoder = { source: 'configured' as const, path: '/nonexistent/ffmpeg', version: 'none' };
    await assert.rejects(async () => {
      for await (const _ of decodePcm(decoder, reader, {
        channels: 1,
        sampleRate: 16_000,
        container: 'wav',
      })) {
        // nothing is decoded
      }
    }, /the decoder could not be run: spawn \/nonexistent\/ffmpeg ENOENT/);
  });
});
