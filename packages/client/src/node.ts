/** @cqs/client/node: Node-only helpers (file paths), kept out of the browser entry. */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import type { UploadSource } from './source.ts';

/** A re-openable upload source that streams a file from disk (never whole in memory). */
export async function fileSource(path: string): Promise<UploadSource & { filename: string }> {
  const { size } = await stat(path);
  return {
    size,
    filename: basename(path),
    open: () =>
      Readable.toWeb(createReadStream(path, { highWaterMark: 256 * 1024 })) as ReadableStream<Uint8Array>,
  };
}

export * from './index.ts';
