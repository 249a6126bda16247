/** What many routes share: the error bodies of each status (decision 8), and the auth declarations. */
import { type TSchema, Type } from 'typebox';
import { MAX_METADATA_BYTES, MAX_METADATA_KEYS, MAX_METADATA_KEYS_IN_ALL } from '../../domain/limits.ts';
import { MAX_JSON_DEPTH } from '../json-body.ts';

/** The limits sentence of every metadata field's description. */
export const METADATA_LIMITS = `At most ${MAX_METADATA_KEYS} top-level keys (per request and per stored record), ${MAX_METADATA_KEYS_IN_ALL} keys at all depths per request, and ${MAX_METADATA_BYTES} bytes of JSON text per stored record (as PostgreSQL prints it, a space after each colon and comma), nested at most ${MAX_JSON_DEPTH} levels deep in the body; numbers must keep their exact value as a 64-bit float (else 422).`;

const ERROR_TEXT: Record<number, string> = {
  400: 'The body is not valid JSON or not an object, or the API key was sent both ways.',
  401: 'API key missing, malformed, unknown or revoked, or its user is inactive.',
  403: 'The API key lacks the scope this endpoint needs.',
  404: 'Not found (another company’s objects are not found either).',
  409: 'Conflict with the current state.',
  410: 'Gone for good: the cursor is older than the oldest kept event.',
  413: 'Request body too large.',
  415: 'Content-Type is not application/json.',
  422: 'A field is invalid; the message names it.',
  429: 'Rate limited; retry after `Retry-After` seconds.',
  503: 'Database or storage unavailable; retry after `Retry-After` seconds.',
};

const ERROR_EXAMPLE: Record<number, string> = {
  400: 'request body is not valid JSON',
  401: 'invalid API key',
  403: 'API key lacks the "calls" scope',
  404: 'not found',
  409: 'conflict',
  410: 'the cursor is older than the oldest kept event; start again without after',
  413: 'request body is too large',
  415: 'unsupported Content-Type; send application/json',
  422: 'tags[0].type: must be one of "string", "integer", "boolean"',
  429: 'rate limit exceeded; retry in 12 seconds',
  503: 'service temporarily unavailable; retry later',
};

const RETRY_AFTER = {
  'Retry-After': { type: 'string', description: 'Seconds to wait before trying again.' },
};

/** The headers an error answer carries (decision 8), by status. */
const ERROR_HEADERS: Record<number, Record<string, { type: string; description: string }>> = {
  401: { 'WWW-Authenticate': { type: 'string', description: '`Bearer realm="cqs"`.' } },
  429: RETRY_AFTER,
  503: RETRY_AFTER,
};

/** Error responses for the given statuses, each an ErrorResponse with a description and an example. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of statuses) {
    const headers = ERROR_HEADERS[status];
    out[status] = Type.Object(
      { error: Type.String() },
      {
        description: ERROR_TEXT[status] ?? 'Error',
        examples: [{ error: ERROR_EXAMPLE[status] ?? 'error' }],
        ...(headers ? { headers } : {}),
      },
    );
  }
  return out;
}
