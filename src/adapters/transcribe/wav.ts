/** 16-bit PCM WAV files for the engines: a header, and a channel written to disk as it is decoded. */

import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { open } from 'node:fs/promises';

/** Bytes of the canonical PCM header. */
export const WAV_HEADER_BYTES = 44;

/** The header of a 16-bit PCM WAV of `samples` sample frames. */
export function wavHeader(samples: number, channels: number, sampleRate: number): Buffer {
  const header = Buffer.alloc(WAV_HEADER_BYTES);
  const dataBytes = samples * channels * 2;
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/**
 * A mono WAV written piece by piece; its header gets the real length when it is closed. A failed write (a
 * full disk: ENOSPC) is thrown by the next `write` or by `close`; without a listener on the stream it was
 * an uncaught exception that ended the whole process, the API with the worker.
 */
export class WavWriter {
  private readonly stream: WriteStream;
  private samples = 0;
  private failure: Error | undefined;
  readonly path: string;
  private readonly sampleRate: number;

  constructor(path: string, sampleRate: number) {
    this.path = path;
    this.sampleRate = sampleRate;
    this.stream = createWriteStream(path);
    this.stream.on('error', (error) => {
      this.failure ??= error;
    });
    this.stream.write(wavHeader(0, 1, sampleRate));
  }

  /** Appends samples; resolves when the stream can take more (backpressure). */
  async write(samples: Int16Array): Promise<void> {
    if (this.failure) throw this.failure;
    this.samples += samples.length;
    if (!this.stream.write(Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength))) {
      // `once` rejects on the stream's 'error', so a write that fails while waited on is thrown here.
      await once(this.stream, 'drain');
    }
  }

  /** Flushes, closes and writes the header with the length. */
  async close(): Promise<void> {
    if (this.failure) {
      this.stream.destroy();
      throw this.failure;
    }
    await new Promise<void>((resolve, reject) =>
      this.stream.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );
    const file = await open(this.path, 'r+');
    try {
      await file.write(wavHeader(this.samples, 1, this.sampleRate), 0, WAV_HEADER_BYTES, 0);
    } finally {
      await file.close();
    }
  }
}
