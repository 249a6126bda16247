/** UUIDs as PostgreSQL's uuid type reads them: 36 characters, hyphens in their places, no braces or prefix. */

/** A UUID in either case (PostgreSQL reads both). */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID as the service writes one (lowercase): in an object key or a cursor it made. */
export const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
