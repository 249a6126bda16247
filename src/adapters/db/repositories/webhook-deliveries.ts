/**
 * Webhook deliveries: the log of an endpoint, the sender's claims and records, and the worker's
 * service-wide statements (the scan for due deliveries, the metrics, the purge), like the queue's claim.
 * Every other query is filtered by company.
 */
import { and, desc, eq, isNotNull, lte, sql } from 'drizzle-orm';
import type { Db } from '../database.ts';
import { rowDateOrNull, rowsOf } from '../prepared.ts';
import { webhookDeliveries } from '../schema.ts';
import { retentionCutoff } from './events.ts';
import type { WebhookEndpoint } from './webhooks.ts';

/** A delivery row. */
export type WebhookDelivery = typeof webhookDeliveries.$inferSelect;

/** One attempt as the delivery log keeps it. */
export interface DeliveryAttempt {
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  excerpt: string | null;
}

/** Inserts a pending delivery due now (nothing when the endpoint already has one for the event). */
export async function insertDelivery(
  db: Db,
  companyId: string,
  values: { endpointId: string; eventId: string; eventType: string; payload: unknown },
): Promise<void> {
  await db
    .insert(webhookDeliveries)
    .values({ companyId, ...values, nextAttemptAt: sql`now()` })
    .onConflictDoNothing();
}

/** The endpoint's deliveries, newest first. */
export async function listDeliveries(
  db: Db,
  companyId: string,
  endpointId: string,
  limit: number,
): Promise<WebhookDelivery[]> {
  return db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.companyId, companyId), eq(webhookDeliveries.endpointId, endpointId)))
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(limit);
}

/** Puts a delivery back to pending, due now, in a new round of attempts; false when there is none. */
export async function restartDelivery(
  db: Db,
  companyId: string,
  endpointId: string,
  id: string,
): Promise<boolean> {
  const rows = await db
    .update(webhookDeliveries)
    .set({ status: 'pending', roundAttempts: 0, nextAttemptAt: sql`now()`, updatedAt: sql`now()` })
    .where(
      and(
        eq(webhookDeliveries.companyId, companyId),
        eq(webhookDeliveries.endpointId, endpointId),
        eq(webhookDeliveries.id, id),
      ),
    )
    .returning({ id: webhookDeliveries.id });
  return rows.length > 0;
}

/** A claimed delivery, with the due time it had (given back to the ones a batch does not send). */
export interface ClaimedDelivery {
  id: string;
  eventId: string;
  payload: unknown;
  roundAttempts: number;
  /** Its due time before the claim, as PostgreSQL's text (exact, to be given back unchanged). */
  dueAt: string;
}

/** What a sender needs of its endpoint, read by the claim. */
export type SendingEndpoint = Pick<
  WebhookEndpoint,
  | 'companyId'
  | 'id'
  | 'url'
  | 'enabled'
  | 'secret'
  | 'previousSecret'
  | 'previousSecretUntil'
  | 'failingSince'
>;

/**
 * Reads the endpoint and, when it is enabled, takes up to `limit` of its due deliveries, oldest due first,
 * moving their due time `leaseSeconds` ahead, so that no other worker sends them meanwhile (a worker that
 * dies leaves them due again when the lease ends). One statement: the endpoint is read at the claim, as a
 * read before it would, without a round trip of its own. Undefined when the endpoint does not exist.
 */
export async function claimDueDeliveries(
  db: Db,
  companyId: string,
  endpointId: string,
  leaseSeconds: number,
  limit: number,
): Promise<{ endpoint: SendingEndpoint; deliveries: ClaimedDelivery[] } | undefined> {
  const result = await db.execute(sql`
    with ep as (
      select company_id, id, url, enabled, secret, previous_secret, previous_secret_until, failing_since
        from webhook_endpoints where company_id = ${companyId} and id = ${endpointId}
    ),
    locked as (
      select id, next_attempt_at, created_at
        from webhook_deliveries
        where company_id = ${companyId} and endpoint_id = ${endpointId} and status = 'pending'
          and next_attempt_at <= now() and exists (select 1 from ep where ep.enabled)
        order by next_attempt_at, created_at
        limit ${limit}
        for update skip locked
    ),
    -- Numbered apart from the lock: PostgreSQL refuses FOR UPDATE beside a window function.
    due as (select id, next_attempt_at, row_number() over (order by next_attempt_at, created_at) as n from locked),
    claimed as (
      update webhook_deliveries d set next_attempt_at = now() + make_interval(secs => ${leaseSeconds})
        from due
        where d.company_id = ${companyId} and d.id = due.id
        returning d.id, d.event_id, d.payload, d.round_attempts, due.next_attempt_at::text as due_at, due.n
    )
    select ep.company_id::text as endpoint_company_id, ep.id::text as endpoint_id, ep.url, ep.enabled,
        ep.secret, ep.previous_secret, ep.previous_secret_until, ep.failing_since,
        c.id::text as delivery_id, c.event_id, c.payload, c.round_attempts, c.due_at, c.n
      from ep left join claimed c on true`);
  const rows = rowsOf(result);
  const first = rows[0];
  if (!first) return undefined;
  const endpoint: SendingEndpoint = {
    companyId: String(first.endpoint_company_id),
    id: String(first.endpoint_id),
    url: String(first.url),
    enabled: first.enabled === true,
    secret: String(first.secret),
    previousSecret: (first.previous_secret as string | null) ?? null,
    previousSecretUntil: rowDateOrNull(first.previous_secret_until),
    failingSince: rowDateOrNull(first.failing_since),
  };
  const deliveries = rows
    .filter((row) => row.delivery_id !== null && row.delivery_id !== undefined)
    .sort((a, b) => Number(a.n) - Number(b.n))
    .map((row) => ({
      id: String(row.delivery_id),
      eventId: String(row.event_id),
      payload: typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload,
      roundAttempts: Number(row.round_attempts),
      dueAt: String(row.due_at),
    }));
  return { endpoint, deliveries };
}

/** Gives claimed deliveries that were not sent their due time back, so they are next again. */
export async function releaseDeliveries(db: Db, companyId: string, deliveries: ClaimedDelivery[]) {
  if (deliveries.length === 0) return;
  const items = JSON.stringify(deliveries.map((d) => ({ id: d.id, due_at: d.dueAt })));
  await db.execute(sql`
    update webhook_deliveries d set next_attempt_at = v.due_at::timestamptz
      from jsonb_to_recordset(${items}::jsonb) as v(id uuid, due_at text)
      where d.company_id = ${companyId} and d.id = v.id and d.status = 'pending'`);
}

/** Records a successful attempt of each delivery, in one statement. */
export async function recordDelivered(
  db: Db,
  companyId: string,
  delivered: { id: string; attempt: DeliveryAttempt }[],
): Promise<void> {
  if (delivered.length === 0) return;
  const items = JSON.stringify(delivered);
  await db.execute(sql`
    update webhook_deliveries d set status = 'delivered', attempts = d.attempts || jsonb_build_array(v.attempt),
        round_attempts = d.round_attempts + 1, next_attempt_at = null, updated_at = now()
      from jsonb_to_recordset(${items}::jsonb) as v(id uuid, attempt jsonb)
      where d.company_id = ${companyId} and d.id = v.id`);
}

/** Records a failed attempt and what follows: failed, or pending again after `retryInSeconds`. */
export async function recordAttempt(
  db: Db,
  companyId: string,
  id: string,
  attempt: DeliveryAttempt,
  outcome: { status: 'failed' } | { status: 'pending'; retryInSeconds: number },
): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({
      status: outcome.status,
      attempts: sql`${webhookDeliveries.attempts} || ${JSON.stringify([attempt])}::jsonb`,
      roundAttempts: sql`${webhookDeliveries.roundAttempts} + 1`,
      nextAttemptAt:
        outcome.status === 'pending' ? sql`now() + make_interval(secs => ${outcome.retryInSeconds})` : null,
      updatedAt: sql`now()`,
    })
    .where(and(eq(webhookDeliveries.companyId, companyId), eq(webhookDeliveries.id, id)));
}

/** Marks every pending delivery of the endpoint failed (it was disabled: they are not sent later). */
export async function failPendingDeliveries(db: Db, companyId: string, endpointId: string): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ status: 'failed', nextAttemptAt: null, updatedAt: sql`now()` })
    .where(
      and(
        eq(webhookDeliveries.companyId, companyId),
        eq(webhookDeliveries.endpointId, endpointId),
        eq(webhookDeliveries.status, 'pending'),
      ),
    );
}

/** Endpoints (of any company) with a delivery due now: the worker's safety net. */
export async function listEndpointsWithDueDeliveries(
  db: Db,
  limit: number,
): Promise<{ companyId: string; endpointId: string }[]> {
  return db
    .selectDistinct({ companyId: webhookDeliveries.companyId, endpointId: webhookDeliveries.endpointId })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.status, 'pending'),
        isNotNull(webhookDeliveries.nextAttemptAt),
        lte(webhookDeliveries.nextAttemptAt, sql`now()`),
      ),
    )
    .limit(limit);
}

/** Pending deliveries of every company and the oldest one's age in seconds, for the metrics. */
export async function pendingDeliveryStats(db: Db): Promise<{ pending: number; oldestAgeSeconds: number }> {
  const [row] = await db
    .select({
      pending: sql<number>`count(*)::int`,
      oldest: sql<number>`coalesce(extract(epoch from now() - min(${webhookDeliveries.createdAt})), 0)::float8`,
    })
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.status, 'pending'));
  return { pending: row?.pending ?? 0, oldestAgeSeconds: Number(row?.oldest ?? 0) };
}

/**
 * Deletes up to `limit` deliveries, of every company, that are no longer pending and were made more than
 * `retentionDays` ago (`retentionCutoff`, as the events purge counts them); returns how many. Service-wide:
 * the cleanup's. It walks each endpoint's `(company_id, endpoint_id, created_at)` index, so the table needs
 * no index of its own for it, nor an extra entry for every delivery written.
 */
export async function purgeOldDeliveries(db: Db, retentionDays: number, limit: number): Promise<number> {
  const result = await db.execute(sql`
    with doomed as materialized (
      select d.company_id, d.id from webhook_endpoints e
      cross join lateral (
        select company_id, id from webhook_deliveries d
        where d.company_id = e.company_id and d.endpoint_id = e.id
          and d.created_at < ${retentionCutoff(retentionDays)}
          and d.status <> 'pending'
        order by d.created_at limit ${limit}
      ) d
      limit ${limit}
    ), deleted as (
      delete from webhook_deliveries w using doomed d where w.company_id = d.company_id and w.id = d.id
      returning 1
    )
    select count(*)::int as n from deleted`);
  return rowsOf<{ n: number }>(result)[0]?.n ?? 0;
}
