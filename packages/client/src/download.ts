/**
 * Downloads a recording in Node: GET of its signed URL through node:http(s), streamed to a temporary file
 * beside the target (never held in memory; the file system's pace is the socket's), checked for length,
 * then renamed into place, so a failed download leaves no partial file under the target's name.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CqsError } from './errors.ts';
import { DEFAULT_IDLE_TIMEOUT_MS, idleTimeout } from './node-put.ts';
import type { RecordingLink } from './types.ts';

/** Bytes received so far of `total`. */
export interface DownloadProgress {
  received: number;
  total: number;
}

/** Options of a download. */
export interface DownloadOptions {
  /** Called as bytes arrive. */
  onProgress?: (progress: DownloadProgress) => void;
  /** Stops the download: it rejects with the signal's reason, and no file is left. */
  signal?: AbortSignal;
  /** Fail when nothing was received for this many ms (default 60000; 0: never). */
  idleTimeoutMs?: number;
  /** Redirects (301, 302, 303, 307, 308) followed before the download fails (default 5). */
  maxRedirects?: number;
}

/** What was written. */
export interface DownloadResult {
  path: string;
  size: number;
  contentType: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** One GET, its answer's headers in: rejects with the signal's reason on abort, or on an idle timeout. */
function get(url: URL, options: DownloadOptions, idle: { error?: Error }): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const { signal } = options;
    if (signal?.aborted) return reject(signal.reason);
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(url, { method: 'GET' }, (res) => {
      // From here whoever reads the body answers the signal; the request still times out when idle.
      signal?.removeEventListener('abort', onAbort);
      resolve(res);
    });
    const onAbort = () => {
      req.destroy();
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    if (idleMs > 0) {
      req.setTimeout(idleMs, () => {
        idle.error = idleTimeout(`GET ${url.host}`, idleMs);
        req.destroy(idle.error);
      });
    }
    req.on('error', (error) => reject(idle.error ?? error));
    req.end();
  });
}

/** The body of an error answer; rejects with the signal's reason on abort, or the idle timeout's error. */
async function text(res: IncomingMessage, signal: AbortSignal | undefined, idle: { error?: Error }) {
  const onAbort = () => res.destroy();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    if (signal?.aborted) throw signal.reason;
    return Buffer.concat(chunks).toString();
  } catch (error) {
    throw signal?.aborted ? signal.reason : (idle.error ?? error);
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * The answer to a GET of `link`, following redirects (a CDN or proxy in front of the storage) up to
 * `maxRedirects`; a redirect without a Location, to a scheme other than http(s), or one too many fails.
 */
async function follow(link: RecordingLink, options: DownloadOptions, idle: { error?: Error }) {
  const maxRedirects = options.maxRedirects ?? 5;
  let url = new URL(link.url);
  for (let redirects = 0; ; redirects++) {
    const res = await get(url, options, idle);
    const status = res.statusCode ?? 0;
    if (!REDIRECTS.has(status)) return res;
    res.resume();
    const location = res.headers.location;
    const refuse = (why: string) => new CqsError(status, { error: why }, 'GET recording');
    if (!location) throw refuse(`a redirect without a Location header (from ${url.host})`);
    const next = new URL(location, url);
    if (next.protocol !== 'http:' && next.protocol !== 'https:') {
      throw refuse(`a redirect to ${next.protocol} URL, which cannot be downloaded`);
    }
    if (redirects >= maxRedirects)
      throw refuse(`more than ${maxRedirects} redirects (the last to ${next.host})`);
    url = next;
  }
}

/** Streams the recording at `link` into the file `path`. */
export async function downloadTo(
  link: RecordingLink,
  path: string,
  options: DownloadOptions = {},
): Promise<DownloadResult> {
  const idle: { error?: Error } = {};
  const res = await follow(link, options, idle);
  if (res.statusCode !== 200) {
    // The storage answers in S3's XML: its Code and Message say why (expired, erased, …).
    const body = await text(res, options.signal, idle);
    const code = /<Code>([^<]*)<\/Code>/.exec(body)?.[1];
    const message = /<Message>([^<]*)<\/Message>/.exec(body)?.[1];
    const error = code ? `${code}: ${message ?? ''}`.trim() : body.slice(0, 200);
    throw new CqsError(res.statusCode ?? 0, { error }, 'GET recording');
  }
  const total = Number(res.headers['content-length'] ?? link.size);
  let received = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      received += chunk.length;
      options.onProgress?.({ received, total });
      callback(null, chunk);
    },
  });
  const temporary = `${path}.${randomBytes(4).toString('hex')}.part`;
  try {
    await pipeline(res, counter, createWriteStream(temporary, { flags: 'wx' }), {
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (received !== total) throw new Error(`recording download ended after ${received} of ${total} bytes`);
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    // The pipeline's AbortError wraps the reason; every other method rejects with the reason itself.
    if (options.signal?.aborted) throw options.signal.reason;
    throw idle.error ?? error;
  }
  return { path, size: received, contentType: String(res.headers['content-type'] ?? link.content_type) };
}
