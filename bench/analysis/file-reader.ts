/** A file opened as an ObjectReader, as the embedded storage opens its objects. */
import { open } from 'node:fs/promises';
import type { ObjectReader } from '../../src/adapters/storage/storage.ts';

/** Opens `path` for ranged reads. */
export async function fileReader(path: string): Promise<ObjectReader> {
  const handle = await open(path, 'r');
  const { size } = await handle.stat();
  return {
    size,
    async read(offset, length) {
      const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - offset)));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
      return buffer.subarray(0, bytesRead);
    },
    close: () => handle.close(),
  };
}
