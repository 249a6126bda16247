/**
 * The webhook fan-out's statements (service-wide, like the queue's claim): its position in the event log,
 * the skip past every event while no endpoint is enabled, and the insert of the deliveries of a batch.
 */
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../database.ts';
import { prepared, rowsOf, runPrepared } from '../prepared.ts';
import { webhookDispatch } from '../schema.ts';
import type { Position } from './events.ts';

/** The fan-out's position in the event log, locked until the transaction ends (one fan-out at a time). */
export async function lockDispatchPosition(db: Db): Promise<Position> {
  const [row] = await db
    .select({ txid: sql<string>`${webhookDispatch.txid}::text`, seq: webhookDispatch.seq })
    .from(webhookDispatch)
    .where(eq(webhookDispatch.id, 1))
    .for('update');
  return row ?? { txid: '0', seq: 0 };
}

// The position past the last final event (below the snapshot's xmin, as the feed reads), moved only
// forward and only while no endpoint anywhere is enabled; and whether one is.
const SKIP_WITHOUT_ENDPOINTS = prepared(
  'webhooks_skip_without_endpoints',
  `with h as (select pg_snapshot_xmin(pg_current_snapshot()) as xmin),
     endpoints as (select exists (select 1 from webhook_endpoints where enabled) as found),
     last as (select e.txid, e.seq from events e, h where e.txid < h.xmin
       order by e.txid desc, e.seq desc limit 1),
     moved as (update webhook_dispatch d set txid = last.txid, seq = last.seq
       from last, endpoints
       where d.id = 1 and not endpoints.found and (last.txid, last.seq) > (d.txid, d.seq))
   select found as has_endpoints from endpoints`,
);

/**
 * When no endpoint of any company is enabled, moves the fan-out's position past every final event in one
 * statement, reading none (deliveries go only to endpoints that existed when an event was written, so
 * nothing is lost); returns whether some endpoint is enabled, and the fan-out must read the events.
 */
export async function skipEventsWithoutEndpoints(db: Db): Promise<boolean> {
  const [row] = await runPrepared(db, SKIP_WITHOUT_ENDPOINTS, []);
  return row?.has_endpoints === true;
}

/** Moves the fan-out's position. */
export async function saveDispatchPosition(db: Db, position: Position): Promise<void> {
  await db
    .update(webhookDispatch)
    .set({ txid: sql`${position.txid}::xid8`, seq: position.seq })
    .where(eq(webhookDispatch.id, 1));
}

/**
 * Inserts, in one statement, a pending delivery for every (event, enabled endpoint) pair whose types match
 * and whose endpoint existed when the event was written; returns the endpoints that got one.
 */
export async function fanOutDeliveries(
  db: Db,
  events: readonly { companyId: string; id: string; type: string; payload: unknown }[],
): Promise<{ companyId: string; endpointId: string }[]> {
  if (events.length === 0) return [];
  const result = await db.execute(sql`
    with e as (
      select * from jsonb_to_recordset(${JSON.stringify(
        events.map((e) => ({
          company_id: e.companyId,
          id: e.id,
          type: e.type,
          payload: e.payload,
        })),
      )}::jsonb) as x(company_id uuid, id text, type text, payload jsonb)
    ), inserted as (
      -- The event's time as stored (microseconds): a JavaScript Date keeps milliseconds, and an event
      -- written in the same millisecond after its endpoint was made compared as older and got nothing.
      insert into webhook_deliveries (company_id, endpoint_id, event_id, event_type, payload, next_attempt_at)
      select e.company_id, w.id, e.id, e.type, e.payload, now()
      from e join events stored on stored.company_id = e.company_id and stored.id = e.id::uuid
        join webhook_endpoints w on w.company_id = e.company_id
      where w.enabled and (w.types is null or e.type = any(w.types)) and w.created_at <= stored.created_at
        -- Not an event of the endpoint's last disabled period, however late the fan-out reaches it.
        and not coalesce(w.reenabled_at > w.disabled_at
          and stored.created_at >= w.disabled_at and stored.created_at < w.reenabled_at, false)
      on conflict do nothing
      returning company_id, endpoint_id
    )
    select distinct company_id::text as company_id, endpoint_id::text as endpoint_id from inserted`);
  const rows = rowsOf<{ company_id: string; endpoint_id: string }>(result);
  return rows.map((r) => ({ companyId: r.company_id, endpointId: r.endpoint_id }));
}
