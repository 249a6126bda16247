/** The PUT of a recording to its signed URL (with retries and progress) and the wait for verification. */
import { retryAfterMs, retryPause, sleep } from './backoff.ts';
import { CqsError, CqsTimeoutError, describeFailure, isAbort, isRetryable } from './errors.ts';
import { type PutFunction, requestJson, type Transport } from './http.ts';
import { countingStream, type PreparedBody, StreamLengthError } from './source.ts';
import type { UploadStatus, UploadUrlResponse } from './types.ts';

/**
 * The service's size limit, exclusive: a recording of this many bytes (250 MB) or more is refused (the
 * storage answers 400 EntityTooLarge, or verification rejects it), so uploadRecording refuses it first.
 */
export const MAX_UPLOAD_BYTES = 250_000_000;

/** Progress of a PUT: bytes handed to the network so far, of `total`; `attempt` counts retries from 1. */
export interface UploadProgress {
  sent: number;
  total: number;
  attempt: number;
}

/** The PUT through fetch (browsers; in Node prefer `nodePut` of `@cqs/client/node`, which keeps memory flat). */
export function fetchPut(doFetch: typeof fetch): PutFunction {
  return async (url, { headers, body, signal }) => {
    const init: RequestInit & { duplex?: 'half' } = { method: 'PUT', headers, body: body as Blob };
    if (body instanceof ReadableStream) init.duplex = 'half';
    if (signal) init.signal = signal;
    const res = await doFetch(url, init);
    return { status: res.status, text: await res.text(), headers: Object.fromEntries(res.headers) };
  };
}

/** Options of the PUT. */
export interface PutOptions {
  onProgress?: (progress: UploadProgress) => void;
  /** Most PUT attempts (default 5); only a re-openable body is retried. */
  maxAttempts?: number;
  signal?: AbortSignal;
}

/**
 * PUTs the body to `upload_url` with exactly `upload_content_type`; retries network errors and 5xx (after
 * the longer of the answer's Retry-After and a back-off), a connection the storage closed while the body
 * was being written (EPIPE, ECONNRESET: it refused the upload without a readable answer) at most once.
 */
export async function putRecording(
  transport: Transport,
  upload: UploadUrlResponse,
  body: PreparedBody,
  options: PutOptions = {},
): Promise<void> {
  const validUntil = Date.now() + upload.expires_in * 1000 - 5000;
  const maxAttempts = body.reopenable ? (options.maxAttempts ?? 5) : 1;
  let writeFailures = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      await putOnce(transport, upload, body, attempt, options);
      return;
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      // A stream of another length than its size is the caller's to mend: sending it again would not.
      if (isAbort(error) || lengthMismatch(error)) throw error;
      const retryable = !(error instanceof CqsError) || error.status >= 500;
      // A storage that refuses a PUT early (a wrong type, too large, expired) answers and closes the
      // connection while the body is still being written: fetch then sees only the failed write. Sending
      // the same request again gets the same refusal, so one more try, not five.
      if (writeFailed(error)) writeFailures++;
      const pause = retryPause(error, attempt, 500, 15_000);
      if (!retryable || attempt >= maxAttempts || writeFailures > 1 || Date.now() + pause >= validUntil) {
        throw error;
      }
      await sleep(pause, options.signal);
    }
  }
}

/** Whether the request failed writing to a connection the other side closed (EPIPE, ECONNRESET). */
function writeFailed(error: unknown): boolean {
  let e = error;
  for (let depth = 0; depth < 4 && e instanceof Error; depth++, e = e.cause) {
    const code = (e as Error & { code?: unknown }).code;
    if (code === 'EPIPE' || code === 'ECONNRESET') return true;
  }
  return false;
}

/** Whether the PUT failed because its stream did not hold the size it was given (countingStream's error). */
function lengthMismatch(error: unknown): boolean {
  let e = error;
  // fetch wraps what the body's stream threw in its own TypeError, as `cause`.
  for (let depth = 0; depth < 3 && e instanceof Error; depth++, e = e.cause) {
    if (e instanceof StreamLengthError) return true;
  }
  return false;
}

async function putOnce(
  transport: Transport,
  upload: UploadUrlResponse,
  body: PreparedBody,
  attempt: number,
  options: PutOptions,
): Promise<void> {
  const total = body.size;
  const report = (sent: number) => options.onProgress?.({ sent, total, attempt });
  report(0);
  const opened = body.open();
  const put = transport.put ?? fetchPut(transport.fetch);
  // Stops reading the body once the PUT is over, however it ended: a fetch that failed (EPIPE) or was
  // answered before the end left the stream, and the file under it, open until garbage collection.
  const done = new AbortController();
  try {
    const { status, text, headers } = await put(upload.upload_url, {
      headers: { 'content-type': upload.upload_content_type, 'content-length': String(total) },
      body: opened instanceof ReadableStream ? countingStream(opened, total, report, done.signal) : opened,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (status < 200 || status > 299) {
      const retryAfter = headers?.['retry-after'];
      throw new CqsError(status, { error: s3Error(text) }, `PUT upload ${upload.upload_id}`, {
        retryAfterMs: retryAfterMs(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter),
      });
    }
  } finally {
    done.abort(new Error('the PUT is over'));
  }
  if (!body.streamed) report(total);
}

/** `Code: Message` of an S3 XML error body, or the text itself. */
function s3Error(text: string): string {
  const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
  const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1];
  return code ? `${code}${message ? `: ${message}` : ''}` : text.slice(0, 300);
}

/** Options of the wait for verification. */
export interface VerifyOptions {
  /** Give up after this many ms (default 300000). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Polls GET /api/v1/upload/{id} until the status is ready, rejected or expired. */
export async function waitForUpload(
  transport: Transport,
  uploadId: number,
  options: VerifyOptions = {},
): Promise<UploadStatus> {
  const deadline = Date.now() + (options.timeoutMs ?? 300_000);
  let delay = 200;
  let failures = 0;
  let state: string | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      const path = `/api/v1/upload/${uploadId}`;
      const status = await requestJson<UploadStatus>(transport, 'GET', path, undefined, options.signal);
      if (status.status === 'ready' || status.status === 'rejected' || status.status === 'expired')
        return status;
      state = status.status;
      failures = 0;
    } catch (error) {
      // A network error, 429 or 5xx while polling is retried with back-off; anything else is final.
      if (options.signal?.aborted) throw options.signal.reason;
      if (!isRetryable(error)) throw error;
      failures++;
      lastError = error;
    }
    // After a failure: the longer of the answer's Retry-After and the back-off. A pause past the deadline
    // would end in the same timeout: it is thrown now, saying the last status read and the last failure.
    const pause = failures > 0 ? retryPause(lastError, failures, 500, 10_000) : delay;
    if (Date.now() + pause > deadline) {
      const seen = state ? `is still ${state}` : 'has no status read yet';
      const failed = failures > 0 ? ` (the last request: ${describeFailure(lastError)})` : '';
      throw new CqsTimeoutError(
        `upload ${uploadId} ${seen}${failed}`,
        failures > 0 ? { cause: lastError } : undefined,
      );
    }
    await sleep(pause, options.signal);
    delay = Math.min(2000, delay * 1.5);
  }
}
