/**
 * The embedded storage's side of its signed URLs: it takes a request as the HTTP layer received it, checks
 * it with the one verifier (`embedded-signer.ts`), and answers with a typed outcome the route turns into
 * S3's XML. Uploads (PUT) are received here, and signed reads (GET, HEAD) of recordings served from here
 * (`embedded-read.ts`), both after the same `authorize` step.
 */
import type { Readable } from 'node:stream';
import { IncomingMessage } from '../http/node-http.ts';
import { readObjectFile } from './embedded-read.ts';
import { checkSignedRequest, UPLOAD_PATH_PREFIX } from './embedded-signer.ts';
import { UploadBodyError, writeObjectFile } from './embedded-writer.ts';
import { InvalidObjectKeyError, objectPath } from './object-path.ts';
import type {
  ReadOutcome,
  SignedReadRequest,
  SignedUrlReceiver,
  SignedUrlRefusal,
  SignedUrlRequest,
  UploadLimits,
  UploadOutcome,
} from './storage.ts';

/** The object key and query of a storage URL; undefined when the path cannot be decoded. */
function parseStorageUrl(url: string): { objectKey: string; query: URLSearchParams } | undefined {
  const mark = url.indexOf('?');
  const path = mark === -1 ? url : url.slice(0, mark);
  const query = new URLSearchParams(mark === -1 ? '' : url.slice(mark + 1));
  try {
    return {
      objectKey: path.slice(UPLOAD_PATH_PREFIX.length).split('/').map(decodeURIComponent).join('/'),
      query,
    };
  } catch {
    return undefined;
  }
}

/**
 * A refusal of the request before any body is read, or the object key the signature admits and the
 * Content-Type it was signed with.
 */
type Authorization =
  | { ok: true; objectKey: string; contentType: string }
  | { ok: false; outcome: SignedUrlRefusal };

/** Checks a request against its signed URL (method, key, expiry, Content-Type). */
function authorize(
  secret: string,
  request: Pick<SignedUrlRequest, 'method' | 'url' | 'contentType'>,
  nowSeconds: number,
): Authorization {
  const parsed = parseStorageUrl(request.url);
  if (!parsed) return { ok: false, outcome: { ok: false, problem: 'bad-url' } };
  const { objectKey, query } = parsed;
  const check = checkSignedRequest(
    secret,
    { method: request.method, objectKey, query, contentType: request.contentType },
    nowSeconds,
  );
  if (check.ok) return { ok: true, objectKey, contentType: check.contentType };
  if (check.problem === 'content-type') {
    return {
      ok: false,
      outcome: { ok: false, problem: 'content-type', expected: check.expected, sent: check.sent },
    };
  }
  if (check.problem === 'expired') {
    return { ok: false, outcome: { ok: false, problem: 'expired', expires: check.expires, now: nowSeconds } };
  }
  return {
    ok: false,
    outcome: { ok: false, problem: check.problem === 'missing' ? 'unsigned' : 'bad-signature' },
  };
}

/** The declared length, or the refusal of a missing or malformed one, or of one at the limit. */
function declaredLength(header: string | undefined, maxBytes: number): number | UploadOutcome {
  if (header === undefined) return { ok: false, problem: 'no-length' };
  if (!/^\d+$/.test(header)) return { ok: false, problem: 'bad-length' };
  const length = Number(header);
  if (length >= maxBytes) return { ok: false, problem: 'too-large', proposedSize: length };
  return length;
}

/** The receiver of the embedded backend whose objects live under `root`. */
export function createSignedUrlReceiver(options: {
  secret: string;
  root: string;
  tmpDir: string;
}): SignedUrlReceiver {
  const { secret, root, tmpDir } = options;
  return {
    pathPrefix: UPLOAD_PATH_PREFIX,
    async receiveUpload(
      request: SignedUrlRequest,
      body: Readable,
      limits: UploadLimits,
    ): Promise<UploadOutcome> {
      const access = authorize(secret, request, Math.floor(Date.now() / 1000));
      if (!access.ok) return access.outcome;
      const contentLength = declaredLength(request.contentLength, limits.maxBytes);
      if (typeof contentLength !== 'number') return contentLength;
      try {
        const path = objectPath(root, access.objectKey);
        // Every check has passed: a client that waits for it may now send the body.
        limits.onBodyExpected?.();
        const written = await writeObjectFile(body, path, tmpDir, {
          contentLength,
          maxBytes: limits.maxBytes,
          idleTimeoutMs: limits.idleTimeoutMs,
          // Node's HTTP parser gives each body chunk memory of its own, which nothing else holds; a body
          // of any other kind (a test's injected request) may be its caller's buffers, which must stay intact.
          handOverChunks: body instanceof IncomingMessage,
        });
        return { ok: true, objectKey: access.objectKey, size: written.size, md5: written.md5 };
      } catch (error) {
        if (error instanceof UploadBodyError) {
          const problem = (
            { IncompleteBody: 'incomplete', EntityTooLarge: 'too-large', RequestTimeout: 'stalled' } as const
          )[error.problem];
          return { ok: false, problem, reason: error.message };
        }
        if (error instanceof InvalidObjectKeyError)
          return { ok: false, problem: 'bad-key', reason: error.message };
        if ((error as NodeJS.ErrnoException).code === 'ENOSPC') return { ok: false, problem: 'full' };
        throw error;
      }
    },
    async serveRead(request: SignedReadRequest): Promise<ReadOutcome> {
      // A reader sends no body, so its Content-Type is not compared; the signed one is served.
      const access = authorize(
        secret,
        { method: request.method, url: request.url, contentType: undefined },
        Math.floor(Date.now() / 1000),
      );
      if (!access.ok) return access.outcome;
      let path: string;
      try {
        path = objectPath(root, access.objectKey);
      } catch (error) {
        if (error instanceof InvalidObjectKeyError)
          return { ok: false, problem: 'bad-key', reason: error.message };
        throw error;
      }
      return readObjectFile(path, access.objectKey, access.contentType, request);
    },
  };
}
