/**
 * Streams an upload body to disk for the embedded storage: into a temporary file, counted, hashed (MD5,
 * S3's ETag) and limited on the way, then renamed into place only when every declared byte arrived. The
 * body is never held in memory, and a refused or interrupted upload leaves no file behind.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';

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
}

/** Counts and hashes the bytes, refuses too many, and gives up on a stalled body. */
class Meter extends Transform {
  size = 0;
  readonly hash = createHash('md5');
  readonly #limits: WriteLimits;
  #timer: NodeJS.Timeout | undefined;

  constructor(limits: WriteLimits) {
    super();
    this.#limits = limits;
    this.#arm();
  }

  #arm(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.destroy(new UploadBodyError('RequestTimeout', 'no data received within the idle timeout'));
    }, this.#limits.idleTimeoutMs);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.size += chunk.length;
    // HTTP framing stops a body at its Content-Length; this is the second check of decision 14.
    if (this.size >= this.#limits.maxBytes) {
      done(new UploadBodyError('EntityTooLarge', 'upload reached the size limit'));
      return;
    }
    if (this.size > this.#limits.contentLength) {
      done(new UploadBodyError('IncompleteBody', 'body is longer than its Content-Length'));
      return;
    }
    this.hash.update(chunk);
    this.#arm();
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    clearTimeout(this.#timer);
    done();
  }

  override _destroy(error: Error | null, done: (error: Error | null) => void): void {
    clearTimeout(this.#timer);
    done(error);
  }
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
  const meter = new Meter(limits);
  try {
    try {
      // flush: fsync before close, so a file renamed into place survives a crash.
      await pipeline(body, meter, createWriteStream(tmp, { flags: 'wx', flush: true }));
    } catch (error) {
      if (error instanceof UploadBodyError) throw error;
      // The client went away (or half-closed) before sending every byte it declared.
      if (meter.size < limits.contentLength && isClientAbort(error)) {
        throw new UploadBodyError('IncompleteBody', 'the connection ended before the whole body arrived');
      }
      throw error;
    }
    if (meter.size < limits.contentLength) {
      throw new UploadBodyError(
        'IncompleteBody',
        `received ${meter.size} of the ${limits.contentLength} bytes declared`,
      );
    }
    await mkdir(dirname(path), { recursive: true });
    await rename(tmp, path);
    return { size: meter.size, md5: meter.hash.digest('hex') };
  } catch (error) {
    await unlink(tmp).catch(() => {});
    throw error;
  }
}

function isClientAbort(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ECONNRESET' || code === 'ECONNABORTED';
}
