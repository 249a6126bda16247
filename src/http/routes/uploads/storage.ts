/**
 * The embedded storage's signed URLs (/storage/v1/object/{key}?X-Cqs-…): a PUT answers as S3 answers a
 * presigned PUT (decision 14), a GET or HEAD as S3 answers a presigned GET (decision 25: ranges, the
 * upload's Content-Type), S3's XML error bodies included. Not part of the JSON API and not behind an
 * API key: the signature is the credential. This file is the one place that maps upload problems to S3
 * errors. A read's bytes are sent from the file as the client takes them. The body is never parsed: the raw request stream goes to the storage's receiver, which checks the
 * signed request and streams the body to disk, and answers with an outcome this file turns into S3's XML.
 */
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../../../adapters/db/errors.ts';
import type { IncomingMessage, Server, ServerResponse } from '../../../adapters/http/node-http.ts';
import type { ReadOutcome, SignedUrlReceiver, UploadOutcome } from '../../../adapters/storage/storage.ts';
import { acceptReceivedObject, MAX_UPLOAD_BYTES } from '../../../domain/uploads/uploads.ts';
import type { Services } from '../../../services.ts';
import { answerClientError, RETRY_AFTER_UNAVAILABLE } from '../../error-handler.ts';

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
  NoSuchKey: 'The specified key does not exist.',
  InvalidRange: 'The requested range is not satisfiable',
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
  NoSuchKey: 404,
  InvalidRange: 416,
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

/**
 * Sends an S3 error. The connection of a write is closed: the client may still be sending a body we will not
 * read. A read (GET, HEAD) keeps it: a player goes on asking for ranges.
 */
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
  if (request.method !== 'GET' && request.method !== 'HEAD') reply.header('connection', 'close');
  return reply
    .code(STATUS[code])
    .header('content-type', 'application/xml')
    .header('x-amz-request-id', request.id)
    .send(body);
}

/** Connections whose upload body is being streamed right now, with that upload's request and response. */
const uploadSockets = new WeakMap<Socket, { request: IncomingMessage; response: ServerResponse }>();

/**
 * Answers a client error on a connection that is streaming an upload: a client that half-closes before
 * sending every declared byte makes Node's HTTP parser fail before the route can answer, so the S3
 * IncompleteBody answer is written here. When the upload's body is complete, the error is about bytes sent
 * after Content-Length: they are a next request of their own, so the upload is answered (and committed)
 * first, and those bytes get their own 400 after it. False for any other connection (the caller answers those).
 */
export function answerUploadClientError(error: Error & { code?: string }, socket: Socket): boolean {
  const upload = uploadSockets.get(socket);
  if (!upload) return false;
  if (upload.request.complete && error.code !== 'ECONNRESET' && error.code !== 'ERR_HTTP_REQUEST_TIMEOUT') {
    const next = () => answerClientError(error, socket);
    if (upload.response.writableFinished) next();
    else upload.response.once('finish', next).once('close', next);
    return true;
  }
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

function httpDate(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Lets the upload route answer `Expect: 100-continue` itself, as S3 does: a refused upload (wrong
 * Content-Type, expired, too large) is answered before the client sends its body. Node sends
 * 100 Continue at once for every request unless the server handles `checkContinue`; other routes keep
 * that behaviour.
 */
export function holdContinueForUploads(server: Server, pathPrefix: string): void {
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    if (!request.url?.startsWith(pathPrefix)) response.writeContinue();
    server.emit('request', request, response);
  });
}

/** What to fix when an upload's Content-Type is not the one its URL was signed for. */
function contentTypeMessage(expected: string, sent: string | undefined): string {
  const what = sent === undefined ? 'no Content-Type header' : `Content-Type: ${sent}`;
  const hint = sent?.startsWith('application/x-www-form-urlencoded')
    ? " (curl's default for --data and --data-binary)"
    : '';
  return (
    `This URL was signed for Content-Type: ${expected}, but the request sent ${what}${hint}. ` +
    `Send the header exactly as upload_content_type gives it, e.g. curl -X PUT -H 'Content-Type: ${expected}' --upload-file FILE URL.`
  );
}

/** The S3 error answering a refused upload or read, with the fields S3 adds to it. */
function refusal(outcome: Exclude<UploadOutcome | ReadOutcome, { ok: true }>): {
  code: S3Code;
  message?: string;
  extra?: Record<string, string | number>;
} {
  switch (outcome.problem) {
    case 'bad-url':
      return { code: 'InvalidURI' };
    case 'unsigned':
      return {
        code: 'AccessDenied',
        message:
          'Query-string authentication requires the X-Cqs-Expires, X-Cqs-Content-Type and X-Cqs-Signature parameters',
      };
    case 'bad-signature':
      return { code: 'SignatureDoesNotMatch' };
    case 'content-type':
      // S3 hides which signed header differed; we say it, since the fix is always the same header.
      return {
        code: 'SignatureDoesNotMatch',
        message: contentTypeMessage(outcome.expected, outcome.sent),
        extra: { ExpectedContentType: outcome.expected, SentContentType: outcome.sent ?? '' },
      };
    case 'expired':
      return {
        code: 'AccessDenied',
        message: 'Request has expired',
        extra: { Expires: httpDate(outcome.expires), ServerTime: httpDate(outcome.now) },
      };
    case 'no-length':
      return { code: 'MissingContentLength' };
    case 'bad-length':
    case 'bad-key':
      return { code: 'InvalidArgument' };
    case 'too-large':
      return {
        code: 'EntityTooLarge',
        extra: {
          ...(outcome.proposedSize === undefined ? {} : { ProposedSize: outcome.proposedSize }),
          MaxSizeAllowed: MAX_UPLOAD_BYTES - 1,
        },
      };
    case 'incomplete':
      return { code: 'IncompleteBody' };
    case 'stalled':
      return { code: 'RequestTimeout' };
    case 'full':
      return { code: 'ServiceUnavailable' };
    case 'no-such-key':
      return { code: 'NoSuchKey', extra: { Key: outcome.objectKey } };
    case 'unsatisfiable':
      return {
        code: 'InvalidRange',
        extra: { RangeRequested: outcome.range, ActualObjectSize: outcome.size },
      };
  }
}

/** Answers a GET or HEAD of a signed URL: the object's bytes (or one range of them), or S3's error. */
async function serveRead(
  receiver: SignedUrlReceiver,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const ifRange = request.headers['if-range'];
  const outcome = await receiver.serveRead({
    method: request.method === 'HEAD' ? 'HEAD' : 'GET',
    url: request.url,
    range: request.headers.range,
    ifRange: typeof ifRange === 'string' ? ifRange : undefined,
  });
  if (!outcome.ok) {
    if (outcome.problem === 'unsatisfiable') reply.header('content-range', `bytes */${outcome.size}`);
    const { code, ...options } = refusal(outcome);
    return sendS3Error(request, reply, code, options);
  }
  const { headers } = outcome;
  reply
    .code(outcome.status)
    .header('content-type', headers.contentType)
    .header('content-length', String(headers.contentLength))
    .header('etag', headers.etag)
    .header('last-modified', headers.lastModified)
    .header('accept-ranges', 'bytes')
    .header('x-amz-request-id', request.id)
    // An object is served on the service's own origin, where the web app keeps its key: whatever its type
    // says, a browser must neither guess another (nosniff) nor run it as a page of that origin (sandbox).
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', 'sandbox');
  if (headers.contentRange) reply.header('content-range', headers.contentRange);
  if (!outcome.body) return reply.send();
  // The body writes to the connection itself, to reuse its buffers (file-body.ts); hooks that run on the
  // response's end (metrics, the request log) still run.
  reply.hijack();
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) reply.raw.setHeader(name, value);
  }
  reply.raw.writeHead(outcome.status);
  try {
    await outcome.body.sendTo(reply.raw);
  } catch (error) {
    // The status line is gone: all that is left is to cut the connection, so the client sees a short body.
    if (!reply.raw.destroyed) request.log.warn({ err: error }, 'a read of storage failed mid-answer');
    reply.raw.destroy();
  }
  return reply;
}

/** The embedded storage's routes, answering at the receiver's path. Registered only when it has one. */
export const storageRoutes: FastifyPluginAsync<{ services: Services; receiver: SignedUrlReceiver }> = async (
  app,
  { services, receiver },
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
    url: `${receiver.pathPrefix}*`,
    exposeHeadRoute: false,
    // The signature in the URL is the credential, checked below.
    config: { public: true },
    schema: { hide: true },
    handler: async (request, reply) => {
      if (request.method === 'GET' || request.method === 'HEAD') return serveRead(receiver, request, reply);
      const socket = request.raw.socket;
      let outcome: UploadOutcome;
      try {
        uploadSockets.set(socket, { request: request.raw, response: reply.raw });
        outcome = await receiver.receiveUpload(
          {
            method: request.method,
            url: request.url,
            contentType: sentContentType.get(request.raw),
            contentLength: request.headers['content-length'],
          },
          request.raw,
          {
            maxBytes: MAX_UPLOAD_BYTES,
            idleTimeoutMs: services.config.uploads.idleTimeoutSeconds * 1000,
            onBodyExpected: () => {
              if (request.headers.expect?.toLowerCase() === '100-continue') reply.raw.writeContinue();
            },
          },
        );
      } finally {
        uploadSockets.delete(socket);
      }
      if (!outcome.ok) {
        if (outcome.problem === 'full') request.log.error('storage is full');
        else if ('reason' in outcome) {
          request.log.info({ problem: outcome.problem, reason: outcome.reason }, 'upload refused');
        }
        const { code, ...options } = refusal(outcome);
        return sendS3Error(request, reply, code, options);
      }
      services.metrics?.uploadBytes(outcome.size);
      const { db } = services.database;
      const recorded = await acceptReceivedObject(
        { db, queue: services.queue, storage: services.storage },
        outcome.objectKey,
        outcome.size,
      );
      if (!recorded) {
        return sendS3Error(request, reply, 'AccessDenied', {
          message: 'No upload is waiting for this object',
        });
      }
      return reply.code(200).header('etag', `"${outcome.md5}"`).header('x-amz-request-id', request.id).send();
    },
  });
};
