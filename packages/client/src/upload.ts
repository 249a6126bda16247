/** The PUT of a recording to its signed URL (with retries and progress) and the wait for verification. */
import { fullJitter, sleep } from './backoff.ts';
import { CqsError, CqsTimeoutError, isAbort, isRetryable } from './errors.ts';
import { type PutFunction, requestJson, type Transport } from './http.ts';
import { countingStream, type PreparedBody, StreamLengthError } from './source.ts';
import type { UploadStatus, UploadUrlResponse } from './types.ts';

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
    return { status: res.status, text: await res.text() };
  };
}

/** Options of the PUT. */
export interface PutOptions {
  onProgress?: (progress: UploadProgress) => void;
  /** Most PUT attempts (default 5); only a re-openable body is retried. */
  maxAttempts?: number;
  signal?: AbortSignal;
}

/** PUTs the body to `upload_url` with exactly `upload_content_type`; retries network errors and 5xx. */
export async function putRecording(
  transport: Transport,
  upload: UploadUrlResponse,
  body: PreparedBody,
  options: PutOptions = {},
): Promise<void> {
  const validUntil = Date.now() + upload.expires_in * 1000 - 5000;
  const maxAttempts = body.reopenable ? (options.maxAttempts ?? 5) : 1;
  for (let attempt = 1; ; attempt++) {
    try {
      await putOnce(transport, upload, body, attempt, options);
      return;
    } catch (error) {
      // A stream of another length than its size is the caller's to mend: sending it again would not.
      if (isAbort(error) || options.signal?.aborted || lengthMismatch(error)) throw error;
      const retryable = !(error instanceof CqsError) || error.status >= 500;
      const pause = fullJitter(attempt, 500, 15_000);
      if (!retryable || attempt >= maxAttempts || Date.now() + pause >= validUntil) throw error;
      await sleep(pause, options.signal);
    }
  }
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
  const { status, text } = await put(upload.upload_url, {
    headers: { 'content-type': upload.upload_content_type, 'content-length': String(total) },
    body: opened instanceof ReadableStream ? countingStream(opened, total, report) : opened,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (status < 200 || status > 299) {
    throw new CqsError(status, { error: s3Error(text) }, `PUT upload ${upload.upload_id}`);
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
  for (;;) {
    let state = 'unreachable';
    try {
      const path = `/api/v1/upload/${uploadId}`;
      const status = await requestJson<UploadStatus>(transport, 'GET', path, undefined, options.signal);
      if (status.status === 'ready' || status.status === 'rejected' || status.status === 'expired')
        return status;
      state = status.status;
      failures = 0;
    } catch (error) {
      // A network error, 429 or 5xx while polling is retried with back-off; anything else is final.
      if (!isRetryable(error) || options.signal?.aborted) throw error;
      failures++;
    }
    const pause = failures > 0 ? fullJitter(failures, 500, 10_000) : delay;
    if (Date.now() + pause > deadline) throw new CqsTimeoutError(`upload ${uploadId} is still ${state}`);
    await sleep(pause, options.signal);
    delay = Math.min(2000, delay * 1.5);
  }
}
