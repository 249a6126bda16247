/** Log settings: a request id on every line, and never an API key (the deprecated query key included). */
import type { FastifyServerOptions } from 'fastify';

/** Removes `api_key` values and upload URL signatures from a URL before it is logged. */
export function redactUrl(url: string): string {
  return url.replace(/([?&](?:api_key|X-Cqs-Signature)=)[^&#]*/gi, '$1[redacted]');
}

/** The logger options of the app. `stream` lets tests read the log. */
export function loggerOptions(level: string, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level,
    ...(stream ? { stream } : {}),
    redact: { paths: ['req.headers.authorization', 'req.query.api_key'], censor: '[redacted]' },
    serializers: {
      req(request: { method: string; url: string; id?: string; ip?: string }) {
        return { method: request.method, url: redactUrl(request.url), remoteAddress: request.ip };
      },
    },
  };
}
