/** Limits of what one request may send and one stored record may hold (documented in the README's Limits). */

/**
 * What stored text may not hold: PostgreSQL refuses the NUL character in text and jsonb. A transcript is
 * stored as json, which would keep it, so call/create checks its segments itself (transcript.ts).
 */
export const NUL_CHARACTER_RULE = 'must not contain the NUL character (\\u0000)';

/**
 * Top-level keys a metadata object may have, in one request and in one stored record (call or handoff
 * record). The database's `*_metadata_keys` check constraints (migration 0006) hold the same number.
 */
export const MAX_METADATA_KEYS = 1000;

/**
 * Keys a request's `metadata` may hold at every depth together. Without it a body within BODY_LIMIT could
 * carry 300,000 nested keys, which the embedded database merges for minutes in the service's own process.
 */
export const MAX_METADATA_KEYS_IN_ALL = 10_000;

/**
 * Bytes of JSON text a stored record's metadata (a call's or a handoff record's) may hold, as PostgreSQL
 * prints it (a space after each `:` and `,`). Merges add up past what one request may send, and every
 * reader's process caches handoff records. 5 MiB, the default BODY_LIMIT: a record may be as large as one
 * request may send by default, and no larger by merging. The `*_metadata_size` check constraints
 * (migration 0029) hold the same number.
 */
export const MAX_METADATA_BYTES = 5_242_880;
