/** Column helpers every table file uses. */
import { timestamp } from 'drizzle-orm/pg-core';

/** `created_at`, set by the database. */
export const createdAt = () =>
  timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
/** `updated_at`, set by the database on insert and by the code on change. */
export const updatedAt = () =>
  timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
