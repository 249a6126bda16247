/**
 * The list's query (decision 23) in domain terms: the opaque cursor and the typed tag filter. The shapes
 * of the other parameters are checked by the route's schema.
 */
import type { CallFilter, CallKey } from '../../adapters/db/repositories/call-reads.ts';
import { foreignCursorError, ValidationError } from '../errors.ts';
import { CANONICAL_UUID } from '../uuid.ts';

/** Most `tag` filters in one request. */
export const MAX_TAG_FILTERS = 20;
/** Longest tag key (decision 5). */
const MAX_TAG_KEY = 128;

/** The cursor of the page after the call `key`: base64url of its sort key, opaque to clients. */
export function encodeCursor(key: CallKey): string {
  return Buffer.from(JSON.stringify([key.startTime, key.id])).toString('base64url');
}

/** The sort key a cursor carries; a cursor not of the form the service makes is a 422 naming `cursor`. */
export function decodeCursor(cursor: string): CallKey {
  const invalid = () => foreignCursorError('query.cursor');
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    typeof parsed[0] !== 'number' ||
    !Number.isFinite(parsed[0]) ||
    typeof parsed[1] !== 'string' ||
    !CANONICAL_UUID.test(parsed[1])
  ) {
    throw invalid();
  }
  return { startTime: parsed[0], id: parsed[1] };
}

/**
 * `tag` filters: `KEY` (the call has the tag) or `KEY:VALUE` (its value written as text equals VALUE),
 * split at the first colon.
 */
export function parseTagFilters(tags: readonly string[]): NonNullable<CallFilter['tags']> {
  if (tags.length > MAX_TAG_FILTERS) {
    throw new ValidationError(`at most ${MAX_TAG_FILTERS} tag filters`, 'query.tag');
  }
  return tags.map((text) => {
    const colon = text.indexOf(':');
    const key = colon < 0 ? text : text.slice(0, colon);
    if (key.length === 0 || [...key].length > MAX_TAG_KEY) {
      throw new ValidationError(
        `must be KEY or KEY:VALUE with a key of 1–${MAX_TAG_KEY} characters`,
        'query.tag',
      );
    }
    return colon < 0 ? { key } : { key, value: text.slice(colon + 1) };
  });
}
