/**
 * The embedded storage's upload URLs (PUT /storage/v1/object/{key}?X-Cqs-…): they answer as S3 answers a
 * presigned PUT, S3's XML error bodies included (decision 14). Not part of the JSON API and not behind an
 * API key: the signature is the credential. This file is the one place that maps upload problems to S3
 * errors. The body is never parsed: the raw request stream goes to the storage, which streams it to disk.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../../adapters/db/errors.ts';
import type { EmbeddedStorage } from '../../adapters/storage/embedded.ts';
import { checkSignedRequest, UPLOAD_PATH_PREFIX } from '../../adapters/storage/embedded-signer.ts';
import { UploadBodyError } from '../../adapters/storage/embedded-writer.ts';
import { InvalidObjectKeyError } from '../../adapters/storage/object-path.ts';
import { MAX_UPLOAD_BYTES, recordUploadedObject } from '../../domain/uploads.ts';
import type { Services } from '../../services.ts';
import { RETRY_AFTER_UNAVAILABLE } from '../error-handler.ts';

const METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'];

/** The Content-Type each request arrived with (see the onRequest hook). */
const sentContentType = new WeakMap<IncomingMessage, string | undefined>();

const S3_MESSAGES = {
  AccessDenied: 'Access Denied',
  SignatureDoesNotMatch:
    'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
  MissingContentLength: 'You must provide the Content-Length HTTP header.',
  EntityTooLarge: 'Your proposed upload exceeds the maximum allowed size',
  IncompleteBody: 'You did not provide the number of bytes specified by the Content-Length HTTP header',
  RequestTimeout:
    'Your socket connection to the server was not read from or written to within the timeout period. Idle connections will be closed.',
  InvalidURI: "Couldn't parse the specified URI.",
  InvalidArgument: 'Invalid Argument',
  InternalError: 'We encountered an internal error. Please try again.',
  ServiceUnavailable: 'Please reduce your request rate.',
} as const;

type S3Code = keyof typeof S3_MESSAGES;

const STATUS: Record<S3Code, number> = {
  AccessDenied: 403,
  SignatureDoesNotMatch: 403,
  MissingContentLength: 411,
  EntityTooLarge: 400,
  IncompleteBody: 400,
  RequestTimeout: 400,
  InvalidURI: 400,
  InvalidArgument: 400,
  InternalError: 500,
  ServiceUnavailable: 503,
};

function xmlEscape(value: string): string {
  return value.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** An S3 error document. */
function s3ErrorXml(code: S3Code, fields: Record<string, string | number>): string {
  const inner = Object.entries({ Code: code, Message: S3_MESSAGES[code], ...fields })
    .map(([name, value]) => `<${name}>${xmlEscape(String(value))}</${name}>`)
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error>${inner}</Error>`;
}

/** Sends an S3 error. The connection is closed: the client may still be sending a body we will not read. */
function sendS3Error(
  request: FastifyRequest,
  reply: FastifyReply,
  code: S3Code,
  options: { message?: string; extra?: Record<string, string | number> } = {},
): FastifyReply {
  const body = s3ErrorXml(code, {
    ...(options.message ? { Message: options.message } : {}),
    ...options.extra,
    Resource: request.url.split('?')[0] ?? '',
    RequestId: request.id,
  });
  if (code === 'ServiceUnavailable') reply.header('retry-after', String(RETRY_AFTER_UNAVAILABLE));
  return reply
    .code(STATUS[code])
    .header('content-type', 'application/xml')
    .header('connection', 'close')
    .header('x-amz-request-id', request.id)
    .send(body);
}

/** Connections whose upload body is being streamed right now. */
const uploadSockets = new WeakSet<Socket>();

/**
 * Answers a client error on a connection that is streaming an upload: a client that half-closes before
 * sending every declared byte makes Node's HTTP parser fail before the route can answer, so the S3
 * IncompleteBody answer is written here. False for any other connection (the caller answers those).
 */
export function answerUploadClientError(error: Error & { code?: string }, socket: Socket): boolean {
  if (!uploadSockets.has(socket)) return false;
  if (socket.writable && error.code !== 'ECONNRESET') {
    const code = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'RequestTimeout' : 'IncompleteBody';
    const body = s3ErrorXml(code, { RequestId: randomUUID() });
    socket.write(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/xml\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
  return true;
}

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

function httpDate(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Lets the upload route answer `Expect: 100-continue` itself, as S3 does: a refused upload (wrong
 * Content-Type, expired, too large) is answered before the client sends its body. Node sends
 * 100 Continue at once for every request unless the server handles `checkContinue`; other routes keep
 * that behaviour.
 */
export function holdContinueForUploads(server: Server): void {
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    if (!request.url?.startsWith(UPLOAD_PATH_PREFIX)) response.writeContinue();
    server.emit('request', request, response);
  });
}

/** The embedded storage's routes. Registered only when STORAGE_BACKEND=embedded. */
export const storageRoutes: FastifyPluginAsync<{ services: Services; storage: EmbeddedStorage }> = async (
  app,
  { services, storage },
) => {
  // Fastify would judge the Content-Type (a 415 in JSON for one it cannot parse) before the route runs; here
  // it is only compared with the signed one. So it is taken off the request, and the body left unread.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
  app.addHook('onRequest', async (request) => {
    sentContentType.set(request.raw, request.headers['content-type']);
    delete request.headers['content-type'];
  });

  app.setErrorHandler((error, request, reply) => {
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: error }, 'database unavailable during an upload');
      return sendS3Error(request, reply, 'ServiceUnavailable');
    }
    request.log.error({ err: error }, 'upload failed');
    return sendS3Error(request, reply, 'InternalError');
  });

  app.route({
    method: METHODS,
    url: `${UPLOAD_PATH_PREFIX}*`,
    exposeHeadRoute: false,
    schema: { hide: true },
    handler: async (request, reply) => {
      const parsed = parseStorageUrl(request.url);
      if (!parsed) return sendS3Error(request, reply, 'InvalidURI');
      const { objectKey, query } = parsed;
      const now = Math.floor(Date.now() / 1000);
      const check = checkSignedRequest(
        storage.secret,
        { method: request.method, objectKey, query, contentType: sentContentType.get(request.raw) },
        now,
      );
      if (!check.ok) {
        if (check.problem === 'expired') {
          return sendS3Error(request, reply, 'AccessDenied', {
            message: 'Request has expired',
            extra: { Expires: httpDate(check.expires), ServerTime: httpDate(now) },
          });
        }
        if (check.problem === 'missing') {
          return sendS3Error(request, reply, 'AccessDenied', {
            message:
              'Query-string authentication requires the X-Cqs-Expires, X-Cqs-Content-Type and X-Cqs-Signature parameters',
          });
        }
        return sendS3Error(request, reply, 'SignatureDoesNotMatch');
      }

      const lengthHeader = request.headers['content-length'];
      if (lengthHeader === undefined) return sendS3Error(request, reply, 'MissingContentLength');
      const contentLength = Number(lengthHeader);
      if (!/^\d+$/.test(lengthHeader)) return sendS3Error(request, reply, 'InvalidArgument');
      if (contentLength >= MAX_UPLOAD_BYTES) {
        return sendS3Error(request, reply, 'EntityTooLarge', {
          extra: { ProposedSize: contentLength, MaxSizeAllowed: MAX_UPLOAD_BYTES - 1 },
        });
      }

      let written: Awaited<ReturnType<EmbeddedStorage['putObject']>>;
      const socket = request.raw.socket;
      try {
        uploadSockets.add(socket);
        // Every check has passed: a client that waits for it may now send the body.
        if (request.headers.expect?.toLowerCase() === '100-continue') reply.raw.writeContinue();
        written = await storage.putObject(objectKey, request.raw, {
          contentLength,
          maxBytes: MAX_UPLOAD_BYTES,
          idleTimeoutMs: services.config.uploads.idleTimeoutSeconds * 1000,
        });
      } catch (error) {
        if (error instanceof UploadBodyError) {
          request.log.info({ problem: error.problem, reason: error.message }, 'upload refused');
          const extra: Record<string, number> =
            error.problem === 'EntityTooLarge' ? { MaxSizeAllowed: MAX_UPLOAD_BYTES - 1 } : {};
          return sendS3Error(request, reply, error.problem, { extra });
        }
        if (error instanceof InvalidObjectKeyError) return sendS3Error(request, reply, 'InvalidArgument');
        if ((error as NodeJS.ErrnoException).code === 'ENOSPC') {
          request.log.error({ err: error }, 'storage is full');
          return sendS3Error(request, reply, 'ServiceUnavailable');
        }
        throw error;
      } finally {
        uploadSockets.delete(socket);
      }

      let recorded: boolean;
      try {
        recorded = await recordUploadedObject(
          { db: services.database.db, queue: services.queue },
          objectKey,
          written.size,
        );
      } catch (error) {
        // The client is told the upload failed, so nothing may stay behind.
        await storage.delete(objectKey).catch(() => {});
        throw error;
      }
      if (!recorded) {
        await storage.delete(objectKey);
        return sendS3Error(request, reply, 'AccessDenied', {
          message: 'No upload is waiting for this object',
        });
      }
      return reply.code(200).header('etag', `"${written.md5}"`).header('x-amz-request-id', request.id).send();
    },
  });
};
