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

/** The pair that identifies a conversation within a company. */
export interface ConversationKey {
  agentUserId: string;
  conversationId: string;
}

/**
 * Inserts the conversation, or when the pair exists updates the `replace` fields of it, in one statement:
 * concurrent creates of one new pair end as one row.
 */
export async function upsertConversation(
  db: Db,
  companyId: string,
  key: ConversationKey,
  fields: ConversationFields,
  replace: readonly (keyof ConversationFields)[],
): Promise<{ id: string; state: Conversation['state']; inserted: boolean }> {
  const set: Record<string, unknown> = { updatedAt: sql`now()` };
  for (const name of replace) set[name] = sql.raw(`excluded.${conversations[name].name}`);
  const [row] = await db
    .insert(conversations)
    .values({ companyId, ...key, ...fields })
    .onConflictDoUpdate({
      target: [conversations.companyId, conversations.agentUserId, conversations.conversationId],
      set,
    })
    // xmax is 0 on a row this statement inserted, and set on one it updated.
    .returning({ id: conversations.id, state: conversations.state, inserted: sql<boolean>`(xmax = 0)` });
  if (!row) throw new Error('upsert returned no row');
  return row;
}

/** The conversation of the pair; `forUpdate` locks it until the transaction ends. */
export async function findConversation(
  db: Db,
  companyId: string,
  key: ConversationKey,
  options: { forUpdate?: boolean } = {},
): Promise<Conversation | undefined> {
  const query = db
    .select()
    .from(conversations)
    .where(
      and(
        eq(conversations.companyId, companyId),
        eq(conversations.agentUserId, key.agentUserId),
        eq(conversations.conversationId, key.conversationId),
      ),
    );
  const [row] = options.forUpdate ? await query.for('update') : await query;
  return row;
}

/** Inserts a live conversation unless the pair exists; undefined when it did (another request made it). */
export async function insertLiveConversation(
  db: Db,
  companyId: string,
  key: ConversationKey,
  values: { productId: number | null; startTime: number; metadata: Record<string, unknown> },
): Promise<Conversation | undefined> {
  const [row] = await db
    .insert(conversations)
    .values({ companyId, ...key, ...values, state: 'live' })
    .onConflictDoNothing({
      target: [conversations.companyId, conversations.agentUserId, conversations.conversationId],
    })
    .returning();
  return row;
}

/** Sets the state, merges `metadata` into the stored metadata (top-level keys), and optionally the product. */
export async function transitionConversation(
  db: Db,
  companyId: string,
  id: string,
  values: { state: 'live' | 'stopped'; metadata: Record<string, unknown> | undefined; productId?: number },
): Promise<void> {
  await db
    .update(conversations)
    .set({
      state: values.state,
      ...(values.metadata
        ? { metadata: sql`${conversations.metadata} || ${JSON.stringify(values.metadata)}::jsonb` }
        : {}),
      ...(values.productId !== undefined ? { productId: values.productId } : {}),
      updatedAt: sql`now()`,
    })
    .where(and(eq(conversations.companyId, companyId), eq(conversations.id, id)));
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
