/** Column helpers every table file uses. */
import { sql } from 'drizzle-orm';
import { timestamp, uuid } from 'drizzle-orm/pg-core';

/** `created_at`, set by the database. */
export const createdAt = () =>
  timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
/** `updated_at`, set by the database on insert and by the code on change. */
export const updatedAt = () =>
  timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
/**
 * `id` of a table that grows with the calls (calls, events, deliveries, handoffs): a UUID of version 7,
 * whose first 48 bits are the time, so new rows land at one end of the indexes that hold it (migration 0021).
 */
export const timeOrderedId = () => uuid('id').notNull().default(sql`cqs_uuid_v7()`);
