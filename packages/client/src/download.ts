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
  signal?: AbortSignal;
}

/** What was written. */
export interface DownloadResult {
  path: string;
  size: number;
  contentType: string;
}

function get(url: string, signal: AbortSignal | undefined): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(target, { method: 'GET', ...(signal ? { signal } : {}) }, resolve);
    req.on('error', reject);
    req.end();
  });
}

async function text(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

/** Streams the recording at `link` into the file `path`. */
export async function downloadTo(
  link: RecordingLink,
  path: string,
  options: DownloadOptions = {},
): Promise<DownloadResult> {
  const res = await get(link.url, options.signal);
  if (res.statusCode !== 200) {
    // The storage answers in S3's XML: its Code and Message say why (expired, erased, …).
    const body = await text(res);
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
    throw error;
  }
  return { path, size: received, contentType: String(res.headers['content-type'] ?? link.content_type) };
}
