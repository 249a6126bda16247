/** The one place where errors become HTTP answers: JSON `{"error"}` always, 5xx without internals. */
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { isDatabaseUnavailable } from '../adapters/db/errors.ts';
import { STATUS_CODES } from '../adapters/http/node-http.ts';
import { AgentConflictError, type DomainErrorKind, findDomainError } from '../domain/errors.ts';
import { formatValidation } from './validation.ts';

const STATUS: Record<DomainErrorKind, number> = {
  bad_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  agent_conflict: 409,
  invalid: 422,
  gone: 410,
  unavailable: 503,
};

/** Seconds a client should wait before retrying after a 503. */
export const RETRY_AFTER_UNAVAILABLE = 5;

function unavailable(reply: FastifyReply) {
  return reply
    .code(503)
    .header('retry-after', String(RETRY_AFTER_UNAVAILABLE))
    .send({ error: 'service temporarily unavailable; retry later' });
}

/**
 * Fastify's answer to a URL it cannot route (a malformed percent-encoding, a path segment past
 * `maxParamLength`), which never reaches the error handler: the API's `{"error"}` instead of Fastify's own
 * fields. The app's `frameworkErrors` option.
 */
export function answerFrameworkError(error: FastifyError, _request: unknown, reply: FastifyReply): void {
  const status = error.statusCode ?? 400;
  const message =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? 'a segment of the path is too long'
      : error.code === 'FST_ERR_BAD_URL'
        ? 'the path is not a valid URL (a malformed percent-encoding)'
        : 'the request cannot be routed';
  void reply.code(status).send({ error: message });
}

/** Installs the error and not-found handlers on the app. */
export function installErrorHandler(app: FastifyInstance): void {
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: `route ${request.method} ${request.url.split('?')[0]} not found` });
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.validation) {
      const v = formatValidation(error.validation, error.validationContext);
      return reply.code(v.status).send({ error: v.message });
    }
    const domain = findDomainError(error);
    if (domain instanceof AgentConflictError) {
      return reply.code(409).send({
        error: domain.message,
        agent_email: domain.agentEmail,
        conflicting_user_ids: domain.conflictingUserIds,
      });
    }
    if (domain) {
      const status = STATUS[domain.kind];
      if (status === 401) reply.header('www-authenticate', 'Bearer realm="cqs"');
      if (status === 503) {
        // Storage out of reach, a transaction PostgreSQL aborted: the client retries, the operator sees why.
        request.log.warn({ err: error }, domain.message);
        return unavailable(reply);
      }
      return reply.code(status).send({ error: domain.message });
    }
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: error }, 'database unavailable');
      return unavailable(reply);
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // Fastify's own client errors: bad JSON, wrong content type, body too large, and the like.
      const message =
        error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
          ? `unsupported Content-Type; send application/json`
          : error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
            ? 'request body is too large'
            : error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError
              ? 'request body is not valid JSON'
              : error.message;
      return reply.code(status).send({ error: message });
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send({ error: 'internal server error' });
  });
}

/**
 * Answers an HTTP-level client error (a malformed request, a connection that ended mid-body) that never
 * became a request, in the API's JSON (Fastify's own default answers with other fields).
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'request timeout']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'request headers too large']
        : [400, 'bad request'];
  const body = JSON.stringify({ error: message });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
