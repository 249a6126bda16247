/**
 * Streams an upload body to disk for the embedded storage: into a temporary file, counted, hashed (MD5,
 * S3's ETag, on a worker thread) and limited on the way, then renamed into place only when every declared
 * byte arrived and is on disk. The body is never held in memory (a few MB at most are in flight), and a
 * refused or interrupted upload leaves no file behind.
 */
import { randomUUID } from 'node:crypto';
import { close, fdatasync, fsync, open, writev } from 'node:fs';
import { mkdir, rename, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { type Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { OffloadedMd5 } from './md5-offload.ts';

/** Why an upload body was not stored, named as S3 names the error. */
export type UploadBodyProblem = 'IncompleteBody' | 'EntityTooLarge' | 'RequestTimeout';

/** The body did not arrive as declared: too short, too large, or stalled. */
export class UploadBodyError extends Error {
  override name = 'UploadBodyError';
  readonly problem: UploadBodyProblem;
  constructor(problem: UploadBodyProblem, message: string) {
    super(message);
    this.problem = problem;
  }
}

/** What was stored. */
export interface WrittenObject {
  size: number;
  /** MD5 of the bytes, hex: what S3 gives as the ETag of a single-part upload. */
  md5: string;
}

/** Limits of one write. */
export interface WriteLimits {
  /** The Content-Length the client declared. */
  contentLength: number;
  /** Bytes at or above which the upload is refused. */
  maxBytes: number;
  /** A body that sends nothing for this long is abandoned. */
  idleTimeoutMs: number;
  /**
   * The body's chunks are this write's alone (the HTTP parser's are): they are then moved to the MD5 worker
   * once written, not copied, and left empty.
   */
  handOverChunks?: boolean;
}

/**
 * Bytes the sink buffers while a write is under way; they go to disk in one writev when it ends (fewer
 * system calls and thread-pool round trips than one write per 64 KB chunk).
 */
const WRITE_BATCH_BYTES = 1024 * 1024;

/** Bytes written between two background flushes to disk (see `ObjectFileSink`). */
const SYNC_EVERY = 32 * 1024 * 1024;

/**
 * Counts, limits, writes and hashes the body. Chunks that arrive while a write is under way are written
 * together (one writev); after a write they go to the MD5 worker (md5-offload.ts). Every
 * SYNC_EVERY bytes a flush to disk starts in the background, so the fsync that ends the file (before it is
 * renamed into place, to survive a crash) has only the last bytes left to wait for.
 */
class ObjectFileSink extends Writable {
  size = 0;
  /** The MD5 of the body, once it has all been written. */
  md5: Promise<string> | undefined;
  readonly #path: string;
  readonly #limits: WriteLimits;
  readonly #hash = new OffloadedMd5();
  readonly #timer: NodeJS.Timeout;
  #fd = -1;
  #unsynced = 0;
  /** The background flush under way, if any. */
  #syncing: Promise<void> | undefined;
  /** A write under way: the descriptor is closed only after it. */
  #writing: Promise<void> | undefined;
  /** Settles when the file is closed (or was never opened). */
  readonly fileClosed: Promise<void>;
  #markClosed!: () => void;

  constructor(path: string, limits: WriteLimits) {
    super({ highWaterMark: WRITE_BATCH_BYTES });
    this.#path = path;
    this.#limits = limits;
    this.fileClosed = new Promise((resolve) => {
      this.#markClosed = resolve;
    });
    this.#timer = setTimeout(() => {
      this.destroy(new UploadBodyError('RequestTimeout', 'no data received within the idle timeout'));
    }, limits.idleTimeoutMs);
  }

  override _construct(done: (error?: Error | null) => void): void {
    open(this.#path, 'wx', (error, fd) => {
      if (!error) this.#fd = fd;
      done(error);
    });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.#store([chunk], done);
  }

  override _writev(
    chunks: { chunk: Buffer; encoding: BufferEncoding }[],
    done: (error?: Error | null) => void,
  ): void {
    this.#store(
      chunks.map((c) => c.chunk),
      done,
    );
  }

  #store(buffers: Buffer[], done: (error?: Error | null) => void): void {
    for (const buffer of buffers) this.size += buffer.length;
    // HTTP framing stops a body at its Content-Length; this is the second check of decision 14.
    if (this.size >= this.#limits.maxBytes) {
      done(new UploadBodyError('EntityTooLarge', 'upload reached the size limit'));
      return;
    }
    if (this.size > this.#limits.contentLength) {
      done(new UploadBodyError('IncompleteBody', 'body is longer than its Content-Length'));
      return;
    }
    this.#writing = writeAll(this.#fd, buffers);
    this.#writing.then(
      () => {
        this.#writing = undefined;
        this.#syncInBackground(buffers);
        // The idle timeout counts from when the service is ready for more, not from the last arrival.
        this.#timer.refresh();
        const caughtUp = this.#hash.update(buffers, this.#limits.handOverChunks === true);
        if (caughtUp) caughtUp.then(() => done(), done);
        else done();
      },
      (error: Error) => {
        this.#writing = undefined;
        done(error);
      },
    );
  }

  #syncInBackground(buffers: Buffer[]): void {
    for (const buffer of buffers) this.#unsynced += buffer.length;
    if (this.#unsynced < SYNC_EVERY || this.#syncing) return;
    this.#unsynced = 0;
    this.#syncing = new Promise<void>((resolve) => {
      fdatasync(this.#fd, (error) => {
        this.#syncing = undefined;
        if (error) this.destroy(error);
        resolve();
      });
    });
  }

  override _final(done: (error?: Error | null) => void): void {
    clearTimeout(this.#timer);
    if (this.size < this.#limits.contentLength) {
      done(
        new UploadBodyError(
          'IncompleteBody',
          `received ${this.size} of the ${this.#limits.contentLength} bytes declared`,
        ),
      );
      return;
    }
    this.md5 = this.#hash.digest();
    // Awaited by the caller; this keeps a failure before then from being an unhandled rejection.
    this.md5.catch(() => {});
    const fd = this.#fd;
    void (this.#syncing ?? Promise.resolve()).then(() => {
      fsync(fd, (error) => {
        if (error) done(error);
        else this.#close(done);
      });
    });
  }

  #close(done: (error?: Error | null) => void): void {
    const fd = this.#fd;
    this.#fd = -1;
    if (fd === -1) {
      this.#markClosed();
      done();
      return;
    }
    close(fd, (error) => {
      this.#markClosed();
      done(error);
    });
  }

  override _destroy(error: Error | null, done: (error: Error | null) => void): void {
    clearTimeout(this.#timer);
    this.#hash.discard();
    // A descriptor is closed only when no write or flush uses it any more (it could be reused at once).
    void Promise.all([this.#writing, this.#syncing]).then(() =>
      this.#close((closeError) => done(error ?? closeError ?? null)),
    );
  }
}

/** Writes every byte of `buffers` at the file's position, however many writes that takes. */
function writeAll(fd: number, buffers: Buffer[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const next = (rest: Buffer[]) => {
      writev(fd, rest, (error, written) => {
        if (error) {
          reject(error);
          return;
        }
        let left = written;
        while (rest.length > 0 && left >= (rest[0] as Buffer).length) left -= (rest.shift() as Buffer).length;
        if (rest.length === 0) resolve();
        else {
          rest[0] = (rest[0] as Buffer).subarray(left);
          next(rest);
        }
      });
    };
    next([...buffers]);
  });
}

/**
 * The owner part of this process's temporary file names: `<host>.<pid>`, so a start can tell its own
 * leftovers (and those of a dead process on this host) from the files of a live upload of another process.
 */
export function tempFileOwner(): string {
  return `${TEMP_FILE_HOST}.${process.pid}`;
}

/** This host's name as temporary file names carry it. */
export const TEMP_FILE_HOST = hostname().replace(/[^A-Za-z0-9-]/g, '_');

/**
 * Writes `body` to `path` through a temporary file in `tmpDir` (on the same file system, so the final
 * rename is atomic). Throws UploadBodyError when the body is not as declared; other errors are I/O errors.
 */
export async function writeObjectFile(
  body: Readable,
  path: string,
  tmpDir: string,
  limits: WriteLimits,
): Promise<WrittenObject> {
  const tmp = join(tmpDir, `${tempFileOwner()}.${randomUUID()}.part`);
  const sink = new ObjectFileSink(tmp, limits);
  try {
    try {
      await pipeline(body, sink);
    } catch (error) {
      if (error instanceof UploadBodyError) throw error;
      // The client went away (or half-closed) before sending every byte it declared.
      if (sink.size < limits.contentLength && isClientAbort(error)) {
        throw new UploadBodyError('IncompleteBody', 'the connection ended before the whole body arrived');
      }
      throw error;
    }
    const md5 = await (sink.md5 as Promise<string>);
    await mkdir(dirname(path), { recursive: true });
    await rename(tmp, path);
    return { size: sink.size, md5 };
  } catch (error) {
    sink.destroy();
    await sink.fileClosed;
    await unlink(tmp).catch(() => {});
    throw error;
  }
}

function isClientAbort(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ECONNRESET' || code === 'ECONNABORTED';
}
