/** The PUT of a recording through node:http(s), writing only as fast as the socket drains. */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { PutFunction } from './http.ts';

/** A PutFunction for Node: unlike Node's fetch, it applies backpressure, so memory stays flat. */
export const nodePut: PutFunction = (url, { headers, body, signal }) =>
  new Promise((resolve, reject) => {
    const target = new URL(url);
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(target, { method: 'PUT', headers, ...(signal ? { signal } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    const stream =
      body instanceof ReadableStream ? body : body instanceof Uint8Array ? undefined : body.stream();
    if (!stream) {
      req.end(body);
      return;
    }
    void write(stream, req).catch((error: unknown) => req.destroy(error as Error));
  });

async function write(
  stream: ReadableStream<Uint8Array>,
  req: import('node:http').ClientRequest,
): Promise<void> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (req.destroyed) return;
      if (!req.write(value)) await drained(req);
    }
    req.end();
  } finally {
    if (req.destroyed) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

/** Resolves when the request drains or closes, leaving no listener behind. */
function drained(req: import('node:http').ClientRequest): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      req.off('drain', done);
      req.off('close', done);
      resolve();
    };
    req.on('drain', done);
    req.on('close', done);
  });
}
