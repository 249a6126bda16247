/** The job queue. */
import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { createdAt } from './columns.ts';

/** The job queue: work that follows an upload or a timer, claimed with FOR UPDATE SKIP LOCKED. */
export const jobs = pgTable(
  'jobs',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    /** The company the job works for; null for service-wide work such as sweeps. */
    companyId: uuid('company_id'),
    kind: text('kind').notNull(),
    payload: jsonb('payload').notNull().default({}),
    /** At most one queued job per key: enqueueing the same key twice is a no-op. */
    dedupeKey: text('dedupe_key'),
    runAt: timestamp('run_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    attempts: integer('attempts').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull().default(5),
    lockedUntil: timestamp('locked_until', { withTimezone: true, mode: 'date' }),
    lastError: text('last_error'),
    /** Set when its dedupe key was enqueued again while it ran (rerunIfRunning): it runs once more. */
    rerun: boolean('rerun').notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [index('jobs_due_idx').on(t.runAt), uniqueIndex('jobs_dedupe_idx').on(t.dedupeKey)],
);
