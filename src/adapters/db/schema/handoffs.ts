/** Call-handoff records. */
import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';
import { conversations } from './calls.ts';
import { createdAt, timeOrderedId, updatedAt } from './columns.ts';

/**
 * A call-handoff record. Immutability once final is enforced by a trigger (see the migrations), not only
 * by the code. `version` increases on every change and is the record's ETag.
 */
export const callHandoffs = pgTable(
  'call_handoffs',
  {
    companyId: uuid('company_id').notNull(),
    id: timeOrderedId(),
    conversationUuid: uuid('conversation_uuid'),
    metadata: jsonb('metadata').notNull().default({}),
    final: boolean('final').notNull().default(false),
    version: integer('version').notNull().default(1),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    finalizedAt: timestamp('finalized_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    primaryKey({ columns: [t.companyId, t.id] }),
    index('call_handoffs_open_idx').on(t.createdAt).where(sql`not ${t.final}`),
    // A call's handoff records (GET /api/v1/calls/{id}, erasure).
    index('call_handoffs_conversation_idx').on(t.companyId, t.conversationUuid),
    foreignKey({
      columns: [t.companyId, t.conversationUuid],
      foreignColumns: [conversations.companyId, conversations.id],
    }),
    check('call_handoffs_final_check', sql`${t.final} = (${t.finalizedAt} is not null)`),
  ],
);
