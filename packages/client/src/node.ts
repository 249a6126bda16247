/** @cqs/client/node: Node-only helpers (file paths), kept out of the browser entry. */
import { type FileHandle, open, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { CqsClient, type CqsClientOptions } from './client.ts';
import { nodePut } from './node-put.ts';
import type { UploadSource } from './source.ts';

const CHUNK = 256 * 1024;

/** A re-openable upload source that streams a file from disk, one chunk per pull (never whole in memory). */
export async function fileSource(path: string): Promise<UploadSource & { filename: string }> {
  const { size } = await stat(path);
  return { size, filename: basename(path), open: () => fileStream(path, size) };
}

/** A pull-based stream of the first `size` bytes of a file: reads only when the consumer asks. */
function fileStream(path: string, size: number): ReadableStream<Uint8Array> {
  let handle: FileHandle | undefined;
  let position = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      handle ??= await open(path, 'r');
      const buffer = new Uint8Array(Math.min(CHUNK, size - position));
      const { bytesRead } =
        buffer.length > 0 ? await handle.read(buffer, 0, buffer.length, position) : { bytesRead: 0 };
      if (bytesRead === 0) {
        await handle.close();
        if (position < size) controller.error(new Error(`${path} shrank while it was read`));
        else controller.close();
        return;
      }
      position += bytesRead;
      controller.enqueue(buffer.subarray(0, bytesRead));
    },
    async cancel() {
      await handle?.close();
    },
  });
}

export * from './index.ts';
export { nodePut } from './node-put.ts';

/** A CqsClient whose uploads go through `nodePut` (flat memory for large files). */
export class CqsNodeClient extends CqsClient {
  constructor(options: CqsClientOptions) {
    super({ put: nodePut, ...options });
  }
}
