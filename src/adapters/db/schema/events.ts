/** The event log and webhooks: endpoints, deliveries and the fan-out's position. */
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  customType,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { companies } from './access.ts';
import { createdAt, timeOrderedId, updatedAt } from './columns.ts';

/** PostgreSQL's 64-bit transaction id (`xid8`), kept as its decimal text: it does not fit a JS number. */
const xid8 = customType<{ data: string; driverData: string }>({ dataType: () => 'xid8' });

/**
 * The event log (decision 27), written in the transaction of the change it tells of (the outbox). `txid`
 * is the writing transaction's id: readers serve only events of transactions older than every one still
 * running, ordered by (`txid`, `seq`), so a reader's cursor never passes an event that commits later.
 */
export const events = pgTable(
  'events',
  {
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id),
    id: timeOrderedId(),
    /** The transaction that wrote the event (pg_current_xact_id(), the top-level id in a savepoint). */
    txid: xid8('txid').notNull().default(sql`pg_current_xact_id()`),
    /** The order of events within one transaction. */
    seq: bigint('seq', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
    type: text('type').notNull(),
    data: jsonb('data').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.companyId, t.id] }),
    index('events_company_position_idx').on(t.companyId, t.txid, t.seq),
    // The feed with a type filter: a poll for a rare type reads its own events in order instead of
    // every event after the cursor (issue 16: 110 ms per poll on a million events, none of them that type).
    index('events_company_type_position_idx').on(t.companyId, t.type, t.txid, t.seq),
    index('events_position_idx').on(t.txid, t.seq),
    index('events_created_idx').on(t.createdAt),
  ],
);

/**
 * How far the retention cleanup has deleted a company's events: a cursor below this position asks for
 * events that are gone (410).
 */
export const eventPurges = pgTable('event_purges', {
  companyId: uuid('company_id')
    .primaryKey()
    .references(() => companies.id),
  txid: xid8('txid').notNull(),
  seq: bigint('seq', { mode: 'number' }).notNull(),
  purgedAt: timestamp('purged_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

/** A company's webhook endpoint (decision 27). The secret is kept to sign with; it is shown only on create and rotation. */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id),
    id: uuid('id').notNull().defaultRandom(),
    url: text('url').notNull(),
    /** The event types sent; null means every type. */
    types: text('types').array(),
    description: text('description'),
    enabled: boolean('enabled').notNull().default(true),
    secret: text('secret').notNull(),
    /** The secret before the last rotation, still signed with until `previousSecretUntil`. */
    previousSecret: text('previous_secret'),
    previousSecretUntil: timestamp('previous_secret_until', { withTimezone: true, mode: 'date' }),
    /** When the endpoint's deliveries started failing without a success since; null while healthy. */
    failingSince: timestamp('failing_since', { withTimezone: true, mode: 'date' }),
    /**
     * When it was last disabled, and then enabled again: the events written between the two are not sent,
     * even when the fan-out reaches them after it was enabled again (decision 27).
     */
    disabledAt: timestamp('disabled_at', { withTimezone: true, mode: 'date' }),
    reenabledAt: timestamp('reenabled_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.companyId, t.id] })],
);

/** One event sent (or being sent) to one endpoint, with every attempt. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    companyId: uuid('company_id').notNull(),
    id: timeOrderedId(),
    endpointId: uuid('endpoint_id').notNull(),
    eventId: text('event_id').notNull(),
    eventType: text('event_type').notNull(),
    /** The event object as sent: kept here so retries and redeliveries do not depend on event retention. */
    payload: jsonb('payload').notNull(),
    status: text('status', { enum: ['pending', 'delivered', 'failed'] })
      .notNull()
      .default('pending'),
    /** Every attempt: `{at, status_code, error, duration_ms, excerpt}`. */
    attempts: jsonb('attempts').notNull().default([]),
    /** Attempts of the current round (a redelivery starts a new round); drives the retry schedule. */
    roundAttempts: integer('round_attempts').notNull().default(0),
    /** When the next attempt is due; null once delivered or failed. */
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ columns: [t.companyId, t.id] }),
    uniqueIndex('webhook_deliveries_event_idx').on(t.companyId, t.endpointId, t.eventId),
    index('webhook_deliveries_list_idx').on(t.companyId, t.endpointId, t.createdAt),
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    foreignKey({
      columns: [t.companyId, t.endpointId],
      foreignColumns: [webhookEndpoints.companyId, webhookEndpoints.id],
    }).onDelete('cascade'),
    check('webhook_deliveries_status_check', sql`${t.status} in ('pending', 'delivered', 'failed')`),
  ],
);

/** How far the webhook fan-out has read the event log (one row, service-wide). */
export const webhookDispatch = pgTable('webhook_dispatch', {
  id: integer('id').primaryKey(),
  txid: xid8('txid').notNull(),
  seq: bigint('seq', { mode: 'number' }).notNull(),
});
