/** @cqs/client/node: Node-only helpers (file paths), kept out of the browser entry. */
import { type FileHandle, open, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { CqsClient, type CqsClientOptions } from './client.ts';
import { type DownloadOptions, type DownloadResult, downloadTo } from './download.ts';
import { createNodePut } from './node-put.ts';
import type { UploadSource } from './source.ts';

const CHUNK = 256 * 1024;

/** A re-openable upload source that streams a file from disk, one chunk per pull (never whole in memory). */
export async function fileSource(path: string): Promise<UploadSource & { filename: string }> {
  const info = await stat(path);
  // Known before any call is made for it: a directory, a device or a file this process cannot read made a
  // call with a pending upload and then failed its PUT (retried as a network error).
  if (!info.isFile()) throw new TypeError(`${path} is not a regular file`);
  await (await open(path, 'r')).close();
  return { size: info.size, filename: basename(path), open: () => fileStream(path, info.size) };
}

/**
 * A pull-based stream of the first `size` bytes of a file: reads only when the consumer asks. The file is
 * closed as soon as the last byte is read, on a read error, and on cancel, also when the cancel arrives
 * while the file is still being opened (a handle left to the garbage collector is DEP0137).
 */
function fileStream(path: string, size: number): ReadableStream<Uint8Array> {
  let handle: FileHandle | undefined;
  let position = 0;
  let cancelled = false;
  const close = async () => {
    const open = handle;
    handle = undefined;
    await open?.close();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!handle) {
        const opened = await open(path, 'r');
        if (cancelled) return opened.close();
        handle = opened;
      }
      try {
        const buffer = new Uint8Array(Math.min(CHUNK, size - position));
        const { bytesRead } =
          buffer.length > 0 ? await handle.read(buffer, 0, buffer.length, position) : { bytesRead: 0 };
        if (bytesRead > 0) {
          position += bytesRead;
          controller.enqueue(buffer.subarray(0, bytesRead));
        }
        if (position >= size || bytesRead === 0) {
          await close();
          if (position < size) controller.error(new Error(`${path} shrank while it was read`));
          else controller.close();
        }
      } catch (error) {
        await close();
        throw error;
      }
    },
    async cancel() {
      cancelled = true;
      await close();
    },
  });
}

export type { DownloadOptions, DownloadProgress, DownloadResult } from './download.ts';
export * from './index.ts';
export {
  createNodePut,
  DEFAULT_IDLE_TIMEOUT_MS,
  type NodePutOptions,
  nodePut,
} from './node-put.ts';

/** Options of CqsNodeClient: CqsClient's, and the idle timeout of its PUTs and downloads. */
export interface CqsNodeClientOptions extends CqsClientOptions {
  /**
   * A recording's PUT or download fails when nothing was sent or received for this many ms (default
   * 60000, DEFAULT_IDLE_TIMEOUT_MS; 0: never). A download's own `idleTimeoutMs` wins. Without it, a
   * storage that stalled held the upload or download for ever unless a signal ended it.
   */
  idleTimeoutMs?: number;
}

/** A CqsClient whose uploads go through `nodePut` (flat memory for large files), and that downloads to files. */
export class CqsNodeClient extends CqsClient {
  readonly #idleTimeoutMs: number | undefined;

  constructor(options: CqsNodeClientOptions) {
    const { idleTimeoutMs, ...rest } = options;
    super({ put: createNodePut(idleTimeoutMs === undefined ? {} : { idleTimeoutMs }), ...rest });
    this.#idleTimeoutMs = idleTimeoutMs;
  }

  /**
   * Downloads the call's latest ready recording into the file `path` (streamed; replaced only once complete).
   * Asks for a signed URL (`recordingUrl`), then GETs it without the API key, following up to
   * `maxRedirects` (5) redirects. Rejects with the signal's reason on abort.
   */
  async downloadRecording(id: string, path: string, options: DownloadOptions = {}): Promise<DownloadResult> {
    const link = await this.recordingUrl(id, options.signal);
    const idle = this.#idleTimeoutMs === undefined ? {} : { idleTimeoutMs: this.#idleTimeoutMs };
    return downloadTo(link, path, { ...idle, ...options });
  }
}
