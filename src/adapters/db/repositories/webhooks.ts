/**
 * Webhook endpoints, every query filtered by company. Their deliveries are in webhook-deliveries.ts, the
 * fan-out's statements in webhook-fanout.ts.
 */
import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../database.ts';
import { companies, webhookEndpoints } from '../schema.ts';

/** An endpoint row. */
export type WebhookEndpoint = typeof webhookEndpoints.$inferSelect;

const endpointById = (companyId: string, id: string) =>
  and(eq(webhookEndpoints.companyId, companyId), eq(webhookEndpoints.id, id));

/**
 * Counts the company's endpoints, holding its row until the transaction ends, so that creates of one
 * company take turns and a cap checked on the count holds. `no key update` leaves the foreign-key checks of
 * the company's other writes (calls, events) free.
 */
export async function countEndpointsLocked(tx: Db, companyId: string): Promise<number> {
  await tx
    .select({ id: companies.id })
    .from(companies)
    .where(eq(companies.id, companyId))
    .for('no key update');
  const [row] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.companyId, companyId));
  return row?.n ?? 0;
}

/** Inserts an endpoint. */
export async function insertEndpoint(
  db: Db,
  companyId: string,
  values: { url: string; types: string[] | null; description: string | null; secret: string },
): Promise<WebhookEndpoint> {
  const [row] = await db
    .insert(webhookEndpoints)
    .values({ companyId, ...values })
    .returning();
  return row as WebhookEndpoint;
}

/** The company's endpoints, oldest first. */
export async function listEndpoints(db: Db, companyId: string): Promise<WebhookEndpoint[]> {
  return db
    .select()
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.companyId, companyId))
    .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id));
}

/** One endpoint; `forUpdate` locks it until the transaction ends. */
export async function findEndpoint(
  db: Db,
  companyId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<WebhookEndpoint | undefined> {
  const query = db.select().from(webhookEndpoints).where(endpointById(companyId, id));
  const [row] = options.forUpdate ? await query.for('update') : await query;
  return row;
}

/** Changes an endpoint; undefined when there is none. */
export async function updateEndpoint(
  db: Db,
  companyId: string,
  id: string,
  values: Partial<
    Pick<
      WebhookEndpoint,
      | 'url'
      | 'types'
      | 'description'
      | 'enabled'
      | 'secret'
      | 'previousSecret'
      | 'previousSecretUntil'
      | 'failingSince'
    >
  >,
): Promise<WebhookEndpoint | undefined> {
  // A change of `enabled` (a PATCH, or the disabling of an endpoint that kept failing) keeps its time, so
  // that the fan-out can tell the events of a disabled period from the others.
  const toggled =
    values.enabled === undefined
      ? {}
      : {
          disabledAt: sql`case when ${webhookEndpoints.enabled} and not ${values.enabled} then now()
            else ${webhookEndpoints.disabledAt} end`,
          reenabledAt: sql`case when not ${webhookEndpoints.enabled} and ${values.enabled} then now()
            else ${webhookEndpoints.reenabledAt} end`,
        };
  const [row] = await db
    .update(webhookEndpoints)
    .set({ ...values, ...toggled, updatedAt: sql`now()` })
    .where(endpointById(companyId, id))
    .returning();
  return row;
}

/** Rotates the secret: the old one keeps signing for `overlapSeconds`. */
export async function rotateEndpointSecret(
  db: Db,
  companyId: string,
  id: string,
  secret: string,
  overlapSeconds: number,
): Promise<WebhookEndpoint | undefined> {
  const [row] = await db
    .update(webhookEndpoints)
    .set({
      previousSecret: sql`${webhookEndpoints.secret}`,
      previousSecretUntil: sql`now() + make_interval(secs => ${overlapSeconds})`,
      secret,
      updatedAt: sql`now()`,
    })
    .where(endpointById(companyId, id))
    .returning();
  return row;
}

/** Deletes an endpoint and its deliveries; false when there was none. */
export async function deleteEndpoint(db: Db, companyId: string, id: string): Promise<boolean> {
  const rows = await db
    .delete(webhookEndpoints)
    .where(endpointById(companyId, id))
    .returning({ id: webhookEndpoints.id });
  return rows.length > 0;
}
