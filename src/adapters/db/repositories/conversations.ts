/** Conversations (calls), unique by (company, agent user, conversation_id). Every query is filtered by company. */
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../database.ts';
import { conversations } from '../schema.ts';

/** A conversation row. */
export type Conversation = typeof conversations.$inferSelect;

/** The fields call/create sets. */
export interface ConversationFields {
  productId: number;
  startTime: number;
  speakerSeparation: 'diarize' | 'channels';
  channelMap: string[] | null;
  transcript: unknown[] | null;
  /** `client` whenever the request sent a transcript: a client's transcript replaces a transcription's. */
  transcriptSource: 'client' | null;
}

/**
 * The conversations of the company with this conversation_id (at most `limit`): of any agent, or of the one
 * agent given.
 */
export async function findConversationsByConversationId(
  db: Db,
  companyId: string,
  conversationId: string,
  options: { agentUserId?: string | undefined; limit: number; lock?: boolean },
): Promise<Conversation[]> {
  const query = db
    .select()
    .from(conversations)
    .where(
      and(
        eq(conversations.companyId, companyId),
        eq(conversations.conversationId, conversationId),
        options.agentUserId === undefined ? undefined : eq(conversations.agentUserId, options.agentUserId),
      ),
    )
    .limit(options.limit);
  // As start and stop lock it (migration 0014): a write made under this lock sees the call's current state.
  return options.lock ? query.for('no key update') : query;
}

/** The conversation with this id (the call's `id`), or undefined. */
export async function findConversationByUuid(
  db: Db,
  companyId: string,
  id: string,
): Promise<Conversation | undefined> {
  const [row] = await db
    .select()
    .from(conversations)
    .where(and(eq(conversations.companyId, companyId), eq(conversations.id, id)));
  return row;
}

/** Marks the conversation changed now (its `updated_at`), for a change stored in another table (its tags). */
export async function touchConversation(db: Db, companyId: string, id: string): Promise<void> {
  await db
    .update(conversations)
    .set({ updatedAt: sql`now()` })
    .where(and(eq(conversations.companyId, companyId), eq(conversations.id, id)));
}
