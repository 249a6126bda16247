/**
 * The pull side of the event log (decision 27): pages of a company's events in log order, after an opaque
 * cursor. A position is (transaction id, sequence); only events of transactions older than the oldest one
 * still running are served, so no event can later appear before a position already handed out, and a
 * reader that always passes the last `next_cursor` sees every event exactly once.
 */
import type { Db } from '../../adapters/db/database.ts';
import {
  findPurgedPosition,
  listEvents,
  type Position,
  type StoredEvent,
} from '../../adapters/db/repositories/events.ts';
import type { Principal } from '../access/principal.ts';
import { ForbiddenError, foreignCursorError, GoneError } from '../errors.ts';
import type { EventView } from './types.ts';

const CURSOR_VERSION = 'e1';
const CURSOR_TEXT = /^e1\.(\d{1,20})\.(\d{1,19})$/;
const START: Position = { txid: '0', seq: 0 };

/** The opaque cursor of a position. */
export function encodeCursor(position: Position): string {
  return Buffer.from(`${CURSOR_VERSION}.${position.txid}.${position.seq}`).toString('base64url');
}

/** The position of a cursor; a ValidationError naming `query.after` when it is not one this service made. */
export function decodeCursor(cursor: string): Position {
  const match = /^[A-Za-z0-9_-]+$/.test(cursor)
    ? CURSOR_TEXT.exec(Buffer.from(cursor, 'base64url').toString())
    : null;
  const seq = Number(match?.[2]);
  if (!match?.[1] || !Number.isSafeInteger(seq)) throw foreignCursorError('query.after');
  return { txid: match[1], seq };
}

/** -1, 0 or 1 as `a` is before, at or after `b`. */
export function comparePositions(a: Position, b: Position): number {
  const ta = BigInt(a.txid);
  const tb = BigInt(b.txid);
  if (ta !== tb) return ta < tb ? -1 : 1;
  return Math.sign(a.seq - b.seq);
}

/** Events and webhooks are company-wide (decision 22): only a key of an admin may use them. */
export function requireCompanyWide(principal: Principal): void {
  if (principal.role !== 'admin') throw new ForbiddenError("the API key's user is not an admin");
}

/** An event as clients see it. */
export function toEventView(event: StoredEvent): EventView {
  return {
    id: event.id,
    type: event.type,
    created_at: event.createdAt.toISOString(),
    data: event.data as EventView['data'],
  };
}

/** A page of the feed. */
export interface EventPage {
  events: EventView[];
  next_cursor: string;
}

/** The company's events after `after` (from the oldest kept without it); 410 when `after` is past retention. */
export async function readEvents(
  db: Db,
  principal: Principal,
  query: { after?: string | undefined; limit: number; types: readonly string[] },
): Promise<EventPage> {
  const requested = query.after === undefined ? undefined : decodeCursor(query.after);
  // With a cursor, the purged position is read after the page: a purge that commits between the two
  // reads is then seen (410) instead of its events having been skipped silently; one that commits after
  // the page left the page whole.
  const from = requested ?? (await findPurgedPosition(db, principal.companyId)) ?? START;
  const page = await listEvents(db, principal.companyId, from, { limit: query.limit, types: query.types });
  if (requested) {
    const purged = await findPurgedPosition(db, principal.companyId);
    if (purged && comparePositions(requested, purged) < 0) {
      throw new GoneError('the cursor is older than the oldest kept event; start again without after');
    }
  }
  const last = page.events.at(-1);
  let next: Position = last ? { txid: last.txid, seq: last.seq } : from;
  // A short page returned every final event after `from`: the reader may move up to the horizon, so that
  // later polls start there (and never fall behind retention while nothing of its company happens).
  if (page.events.length < query.limit) {
    const horizon = { txid: page.horizon, seq: 0 };
    if (comparePositions(horizon, next) > 0) next = horizon;
  }
  return { events: page.events.map(toEventView), next_cursor: encodeCursor(next) };
}
