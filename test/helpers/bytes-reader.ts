/** An object reader over bytes in memory, as the storages open one (tests of the decoder need no storage). */
import type { ObjectReader } from '../../src/adapters/storage/storage.ts';

/** Reads `bytes` as an object of that size. */
export function bytesReader(bytes: Uint8Array): ObjectReader {
  return {
    size: bytes.length,
    async read(offset: number, length: number) {
      return bytes.slice(offset, offset + length);
    },
    async close() {},
  };
}
