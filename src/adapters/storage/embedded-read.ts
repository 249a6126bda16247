/**
 * Reads of the embedded storage's objects for its signed GET URLs, answered as S3 answers a GET: the
 * signed Content-Type, Content-Length, a strong ETag, Last-Modified, and one byte range (206, or 416 when
 * it cannot be satisfied). Several ranges are answered with the whole object (200), as S3 does: S3 serves
 * no multipart/byteranges. A malformed Range is ignored (200), as RFC 9110 says. The file is opened once
 * and sent from that descriptor, so an erasure in between cannot mix two files, and it is never read
 * whole into memory.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { fileRangeBody } from './file-body.ts';
import type { ReadOutcome, SignedReadRequest } from './storage.ts';

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** A byte range to serve, both ends included. */
type ByteRange = { start: number; end: number };

/**
 * The one range a `Range` header asks of an object of `size` bytes (RFC 9110 §14.1.2), as S3 reads it:
 * undefined (the whole object) for a header that is malformed, not in bytes, or asks for several ranges;
 * 'unsatisfiable' for one range that starts past the end (or a suffix of 0). A suffix longer than the
 * object is the whole object, and the unit is case-insensitive. Written here rather than with
 * `range-parser`, which answered 416 to `bytes=-5000` of 1,000 bytes and to the malformed `bytes=20-10`,
 * and merged `bytes=0-9,10-19` into one range where S3 sends the whole object.
 */
function byteRangeOf(size: number, header: string): ByteRange | undefined | 'unsatisfiable' {
  const unit = /^\s*bytes\s*=/i.exec(header);
  if (!unit) return undefined;
  const specs = header
    .slice(unit[0].length)
    .split(',')
    .map((spec) => spec.trim())
    .filter((spec) => spec.length > 0);
  if (specs.length !== 1) return undefined;
  const spec = specs[0] as string;
  const suffix = /^-(\d+)$/.exec(spec);
  if (suffix) {
    const length = Number(suffix[1]);
    if (length === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - length), end: size - 1 };
  }
  const bounded = /^(\d+)-(\d*)$/.exec(spec);
  if (!bounded) return undefined;
  const first = Number(bounded[1]);
  const last = bounded[2] === '' ? Number.POSITIVE_INFINITY : Number(bounded[2]);
  if (last < first) return undefined;
  if (first >= size) return 'unsatisfiable';
  return { start: first, end: Math.min(last, size - 1) };
}

/** The one range to serve, or undefined for the whole object, or 'unsatisfiable'. */
function chosenRange(
  size: number,
  request: Pick<SignedReadRequest, 'range' | 'ifRange'>,
  validators: string[],
): ByteRange | undefined | 'unsatisfiable' {
  if (request.range === undefined) return undefined;
  // If-Range names the object the client has part of; another one means "send it whole".
  if (request.ifRange !== undefined && !validators.includes(request.ifRange.trim())) return undefined;
  return byteRangeOf(size, request.range);
}

/** Serves a read of the object file at `path` as `contentType`. */
export async function readObjectFile(
  path: string,
  objectKey: string,
  contentType: string,
  request: SignedReadRequest,
): Promise<ReadOutcome> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if (isMissing(error)) return { ok: false, problem: 'no-such-key', objectKey };
    throw error;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) {
      await handle.close();
      return { ok: false, problem: 'no-such-key', objectKey };
    }
    const size = info.size;
    // Objects are written once and renamed into place, so inode, size and time name one content.
    const etag = `"${info.ino.toString(16)}-${size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
    const lastModified = info.mtime.toUTCString();
    const range = chosenRange(size, request, [etag, lastModified]);
    if (range === 'unsatisfiable') {
      await handle.close();
      return { ok: false, problem: 'unsatisfiable', size, range: request.range ?? '' };
    }
    const start = range?.start ?? 0;
    const end = range?.end ?? size - 1;
    const headers = {
      contentType,
      contentLength: end - start + 1,
      etag,
      lastModified,
      ...(range ? { contentRange: `bytes ${start}-${end}/${size}` } : {}),
    };
    const status = range ? 206 : 200;
    if (request.method === 'HEAD' || size === 0) {
      await handle.close();
      return { ok: true, status, headers, body: undefined };
    }
    return { ok: true, status, headers, body: fileRangeBody(handle, start, end) };
  } catch (error) {
    await handle.close().catch(() => {});
    throw error;
  }
}
