/**
 * Reads of the embedded storage's objects for its signed GET URLs, answered as S3 answers a GET: the
 * signed Content-Type, Content-Length, a strong ETag, Last-Modified, and one byte range (206, or 416 when
 * it cannot be satisfied). Several ranges are answered with the whole object (200), as S3 does: S3 serves
 * no multipart/byteranges. A malformed Range is ignored (200), as RFC 9110 says. The file is opened once
 * and sent from that descriptor, so an erasure in between cannot mix two files, and it is never read
 * whole into memory.
 */
import { type FileHandle, open } from 'node:fs/promises';
import parseRange from 'range-parser';
import { fileRangeBody } from './file-body.ts';
import type { ReadOutcome, SignedReadRequest } from './storage.ts';

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** The one range to serve, or undefined for the whole object, or 'unsatisfiable'. */
function chosenRange(
  size: number,
  request: Pick<SignedReadRequest, 'range' | 'ifRange'>,
  validators: string[],
): { start: number; end: number } | undefined | 'unsatisfiable' {
  if (request.range === undefined) return undefined;
  // If-Range names the object the client has part of; another one means "send it whole".
  if (request.ifRange !== undefined && !validators.includes(request.ifRange.trim())) return undefined;
  const ranges = parseRange(size, request.range, { combine: true });
  if (ranges === -1) return 'unsatisfiable';
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return undefined;
  const [range] = ranges;
  return range ? { start: range.start, end: range.end } : undefined;
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
