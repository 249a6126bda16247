/** Conversations (calls), unique by (company, agent user, conversation_id). Every query is filtered by company. */
import { and, eq } from 'drizzle-orm';
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
  options: { agentUserId?: string | undefined; limit: number },
): Promise<Conversation[]> {
  return db
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

/**
 * Locks the call's row until the transaction ends. A verdict on an upload takes it first, so that it and
 * anything else that chooses what the call's analysis and transcription are of (another verdict, which
 * locks it too; a create that changes the speaker or sends a transcript, which updates the row) take turns,
 * each seeing what the one before committed. FOR NO KEY UPDATE: an upload or a tag may still be inserted
 * under the call.
 */
export async function lockCallForRuns(db: Db, companyId: string, id: string): Promise<void> {
  await db
    .select({ id: conversations.id })
    .from(conversations)
    .where(and(eq(conversations.companyId, companyId), eq(conversations.id, id)))
    .for('no key update');
}
