/** Stereo 16-bit PCM WAV files of any size, written in chunks (never whole in memory). */
import { open } from 'node:fs/promises';

/** A WAV header for `dataBytes` of 16-bit stereo PCM at `rate` Hz. */
export function wavHeader(dataBytes: number, rate = 8000): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write('WAVE', 8);
  h.write('fmt ', 12);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(2, 22); // stereo
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 4, 28);
  h.writeUInt16LE(4, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(dataBytes, 40);
  return h;
}

/** Writes a stereo WAV of about `totalBytes` (a tone on the left, another on the right) to `path`. */
export async function writeStereoWav(path: string, totalBytes: number, rate = 8000): Promise<number> {
  const frames = Math.max(rate, Math.floor((totalBytes - 44) / 4));
  const file = await open(path, 'w');
  try {
    await file.write(wavHeader(frames * 4, rate));
    const chunkFrames = 64 * 1024;
    const chunk = Buffer.alloc(chunkFrames * 4);
    for (let i = 0; i < chunkFrames; i++) {
      chunk.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 4);
      chunk.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 660 * i) / rate)), i * 4 + 2);
    }
    for (let done = 0; done < frames; done += chunkFrames) {
      const n = Math.min(chunkFrames, frames - done);
      await file.write(chunk, 0, n * 4);
    }
  } finally {
    await file.close();
  }
  return 44 + frames * 4;
}
