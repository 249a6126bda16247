/**
 * The event log. Writes go in the transaction of the change (the outbox). Reads serve only events whose
 * writing transaction is older than every transaction still in progress (`pg_snapshot_xmin` of the
 * statement's snapshot): no such event can still commit, so a position handed out is final and a reader
 * that continues after it never skips one that was in flight.
 */
import { and, eq, inArray, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../database.ts';
import { rowDate, rowsOf } from '../prepared.ts';
import { conversations, eventPurges, events, users } from '../schema.ts';

/** An event to write. */
export interface NewEvent {
  type: string;
  data: Record<string, unknown>;
}

/** A stored event with its position. */
export interface StoredEvent {
  companyId: string;
  id: string;
  type: string;
  data: Record<string, unknown>;
  createdAt: Date;
  txid: string;
  seq: number;
}

/** A place in the log: after (`txid`, `seq`). */
export interface Position {
  txid: string;
  seq: number;
}

/** Writes events of one company in `db`, which should be the change's transaction. */
export async function insertEvents(db: Db, companyId: string, rows: readonly NewEvent[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insert(events).values(rows.map((r) => ({ companyId, type: r.type, data: r.data })));
}

/** The ids of calls that events name: its `id`, the client's `conversation_id` and the agent's email. */
export interface CallRef {
  call_id: string;
  conversation_id: string;
  agent_email: string;
}

/** The call refs of these conversations of the company, by conversation uuid. */
export async function findCallRefs(
  db: Db,
  companyId: string,
  uuids: readonly string[],
): Promise<Map<string, CallRef>> {
  if (uuids.length === 0) return new Map();
  const rows = await db
    .select({ id: conversations.id, conversationId: conversations.conversationId, email: users.email })
    .from(conversations)
    .innerJoin(
      users,
      and(eq(users.companyId, conversations.companyId), eq(users.id, conversations.agentUserId)),
    )
    .where(and(eq(conversations.companyId, companyId), inArray(conversations.id, [...new Set(uuids)])));
  return new Map(
    rows.map((r) => [r.id, { call_id: r.id, conversation_id: r.conversationId, agent_email: r.email }]),
  );
}

/**
 * The call ref of conversation `uuid` of company `companyId` as a jsonb object (a scalar subquery, null when
 * there is no such call): what findCallRefs gives, for a statement that writes its own event.
 */
export function callRefJson(companyId: SQL, uuid: SQL): SQL {
  return sql`(select jsonb_build_object('call_id', c.id, 'conversation_id', c.conversation_id, 'agent_email', u.email)
    from conversations c join users u on u.company_id = c.company_id and u.id = c.agent_user_id
    where c.company_id = ${companyId} and c.id = ${uuid})`;
}

/** What listEvents reads: up to `limit` events of these types (all when empty), and with `held`, see there. */
export interface ListEventsOptions {
  limit: number;
  types: readonly string[];
  held?: boolean;
}

/**
 * The statement of listEvents (exported so a test can EXPLAIN exactly what the feed runs): the horizon, and
 * the events after `after` below it, in log order.
 */
export function listEventsQuery(companyId: string | null, after: Position, options: ListEventsOptions): SQL {
  // A committed event at or past the horizon waits for an older transaction: one probe of the position index.
  const held = options.held ? sql`exists (select 1 from events where txid >= h.xmin)` : sql`false`;
  return sql`
    with h as (select pg_snapshot_xmin(pg_current_snapshot()) as xmin)
    select h.xmin::text as horizon, ${held} as held, e.* from h left join lateral (
      select company_id, id::text as id, type, data, created_at, txid::text as position_txid,
        seq::text as position_seq
      from events
      where (${companyId}::uuid is null or company_id = ${companyId}::uuid)
        and (txid, seq) > (${after.txid}::xid8, ${after.seq}::bigint)
        and txid < h.xmin
        ${options.types.length > 0 ? sql`and type in ${[...options.types]}` : sql``}
      order by events.txid, events.seq
      limit ${options.limit}
    ) e on true`;
}

/**
 * Up to `limit` final events after `after` in log order, of one company (or of every company when
 * `companyId` is null: the webhook fan-out's), of the given types (all when empty), and the horizon: the
 * oldest transaction still running when the statement ran, below which every event is final. With `held`,
 * also whether committed events wait past the horizon, behind an older transaction (maybe of another
 * database of the cluster: transaction ids are the server's), to become final when it ends. One statement,
 * so all of it comes from the same snapshot.
 */
export async function listEvents(
  db: Db,
  companyId: string | null,
  after: Position,
  options: ListEventsOptions,
): Promise<{ events: StoredEvent[]; horizon: string; held: boolean }> {
  const result = await db.execute(listEventsQuery(companyId, after, options));
  const rows = rowsOf(result);
  const horizon = String(rows[0]?.horizon ?? after.txid);
  const found = rows
    .filter((r) => r.id !== null && r.id !== undefined)
    .map((r) => ({
      companyId: String(r.company_id),
      id: String(r.id),
      type: String(r.type),
      data: (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as Record<string, unknown>,
      createdAt: rowDate(r.created_at),
      txid: String(r.position_txid),
      seq: Number(r.position_seq),
    }));
  return { events: found, horizon, held: rows[0]?.held === true };
}

/** How far the company's events were deleted by retention, or undefined when none was. */
export async function findPurgedPosition(db: Db, companyId: string): Promise<Position | undefined> {
  const [row] = await db
    .select({ txid: sql<string>`${eventPurges.txid}::text`, seq: eventPurges.seq })
    .from(eventPurges)
    .where(eq(eventPurges.companyId, companyId));
  return row;
}

/**
 * The time `retentionDays` days ago, as SQL, for EVENT_RETENTION_DAYS (events, and webhook deliveries with
 * them). Days of 86,400 s: `days =>` counts calendar days in the session's time zone, and across a change to
 * summer time a server with such a zone kept events for an hour less than EVENT_RETENTION_DAYS.
 */
export function retentionCutoff(retentionDays: number): SQL {
  return sql`now() - make_interval(secs => ${retentionDays * 86_400})`;
}

/**
 * Deletes up to `limit` events of every company created more than `retentionDays` ago and records, per
 * company, the highest position deleted; returns how many were deleted. Service-wide: the cleanup's.
 */
export async function purgeOldEvents(db: Db, retentionDays: number, limit: number): Promise<number> {
  const result = await db.execute(sql`
    with doomed as (
      select company_id, id from events
      where created_at < ${retentionCutoff(retentionDays)}
      order by created_at limit ${limit}
    ), deleted as (
      delete from events e using doomed d where e.company_id = d.company_id and e.id = d.id
      returning e.company_id, e.txid, e.seq
    ), highest as (
      select distinct on (company_id) company_id, txid, seq from deleted order by company_id, txid desc, seq desc
    ), recorded as (
      insert into event_purges as p (company_id, txid, seq)
      select company_id, txid, seq from highest
      on conflict (company_id) do update set txid = excluded.txid, seq = excluded.seq, purged_at = now()
        where (p.txid, p.seq) < (excluded.txid, excluded.seq)
      returning 1
    )
    select count(*)::int as n from deleted`);
  const rows = rowsOf<{ n: number }>(result);
  return rows[0]?.n ?? 0;
}
