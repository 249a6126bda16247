/**
 * The PUT of a recording through node:http(s): it asks `Expect: 100-continue` and writes the body only
 * once the storage said to go on, only as fast as the socket drains.
 */
import { type ClientRequest, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { PutFunction } from './http.ts';

/** Default of `idleTimeoutMs`: a PUT or download with nothing sent or received for a minute fails. */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

/**
 * How long the body waits for `100 Continue` before it is sent anyway (as curl does): a server or proxy
 * that ignores `Expect` may never send one.
 */
const CONTINUE_TIMEOUT_MS = 1000;

/** Options of createNodePut. */
export interface NodePutOptions {
  /** Fail the PUT when nothing was sent or received for this many ms (default 60000; 0: never). */
  idleTimeoutMs?: number;
}

/** The error of a request on which nothing moved for `ms` (a network error: the PUT is retried). */
export function idleTimeout(what: string, ms: number): Error {
  return Object.assign(new Error(`${what}: nothing sent or received for ${ms} ms`), { code: 'ETIMEDOUT' });
}

/**
 * A PutFunction for Node: unlike Node's fetch, it applies backpressure, so memory stays flat. It sends
 * `Expect: 100-continue` and writes the body only on `100 Continue`: a storage that refuses the upload at
 * once (a wrong type, too large, an expired URL) answers before the body, and that answer (a 400 or 403
 * with S3's reason) is the result, where writing the body first ended in EPIPE as the storage closed the
 * connection. Rejects with the signal's reason on abort.
 */
export function createNodePut(options: NodePutOptions = {}): PutFunction {
  const idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  return (url, { headers, body, signal }) =>
    new Promise((resolve, reject) => {
      const stream =
        body instanceof ReadableStream ? body : body instanceof Uint8Array ? undefined : body.stream();
      let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
      let settled = false;
      let started = false;
      let answered = false;
      let ended = false;
      let continueTimer: ReturnType<typeof setTimeout> | undefined;
      /** Stops reading the body: a file source closes its file. */
      const release = (reason: unknown) => {
        const cancelled = reader ? reader.cancel(reason) : stream?.cancel(reason);
        cancelled?.catch(() => {});
      };
      if (signal?.aborted) {
        release(signal.reason);
        reject(signal.reason);
        return;
      }
      const target = new URL(url);
      const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = request(
        target,
        { method: 'PUT', headers: { ...headers, expect: '100-continue' } },
        (res) => {
          answered = true;
          clearTimeout(continueTimer);
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            if (settled) return;
            finish();
            // An answer before the whole body went (a refusal) is final: the rest is not sent, and the
            // connection, which still expects it, is not used again.
            if (!ended) {
              release(new Error('the PUT was answered before its body was sent'));
              req.destroy();
            }
            resolve({
              status: res.statusCode ?? 0,
              text: Buffer.concat(chunks).toString(),
              headers: res.headers,
            });
          });
          res.on('error', fail);
          res.on('close', () => {
            if (!res.complete) fail(new Error(`PUT ${target.host}: the connection closed during the answer`));
          });
        },
      );
      const finish = () => {
        settled = true;
        clearTimeout(continueTimer);
        signal?.removeEventListener('abort', onAbort);
      };
      function fail(error: unknown) {
        if (settled) return;
        finish();
        release(error);
        req.destroy();
        reject(error);
      }
      const onAbort = () => fail(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      // A write that fails because the storage answered and closed the connection: its answer decides.
      req.on('error', (error) => {
        if (!answered) fail(error);
      });
      if (idleMs > 0) req.setTimeout(idleMs, () => fail(idleTimeout(`PUT ${target.host}`, idleMs)));
      const stopped = () => settled || answered || req.destroyed;
      const send = async () => {
        if (started || stopped()) return;
        started = true;
        clearTimeout(continueTimer);
        if (!stream) {
          ended = true;
          req.end(body as Uint8Array);
          return;
        }
        reader = stream.getReader();
        try {
          for (;;) {
            const { value, done } = await reader.read();
            if (stopped()) return;
            if (done) {
              ended = true;
              req.end();
              return;
            }
            if (!req.write(value)) await drained(req);
          }
        } catch (error) {
          fail(error);
        }
      };
      req.on('continue', () => void send());
      continueTimer = setTimeout(() => void send(), CONTINUE_TIMEOUT_MS);
      req.flushHeaders();
    });
}

/** The PutFunction of CqsNodeClient: createNodePut() with the default idle timeout. */
export const nodePut: PutFunction = createNodePut();

/** Resolves when the request drains or closes, leaving no listener behind. */
function drained(req: ClientRequest): Promise<void> {
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
