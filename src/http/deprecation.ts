/** The deprecation headers of RFC 9745 (Deprecation) and RFC 8594 (Sunset), with a Link to the docs. */
import type { FastifyReply } from 'fastify';

/** 2026-01-01T00:00:00Z: when the deprecated features were deprecated. */
const DEPRECATED_AT = 1_767_225_600;
/** The value of the `Deprecation` header (RFC 9745: a date as `@` and Unix seconds). */
export const DEPRECATION_HEADER = `@${DEPRECATED_AT}`;
/** When the deprecated `api_key` query parameter stops working. */
export const API_KEY_QUERY_SUNSET = 'Wed, 30 Jun 2027 23:59:59 GMT';

/** Marks a response as coming from a deprecated feature; `sunset` when a removal date is set. */
export function setDeprecationHeaders(reply: FastifyReply, docsUrl: string, sunset?: string): void {
  reply.header('deprecation', DEPRECATION_HEADER);
  reply.header('link', `<${docsUrl}>; rel="deprecation"; type="text/html"`);
  if (sunset) reply.header('sunset', sunset);
}
