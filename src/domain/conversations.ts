/** Finding the conversation of an (agent, conversation_id) pair, or the 404 that says which pair is missing. */
import type { Db } from '../adapters/db/database.ts';
import { type Conversation, findConversation } from '../adapters/db/repositories/conversations.ts';
import { NotFoundError } from './errors.ts';

/** The conversation of the pair; NotFoundError when the agent has none with that conversation_id. */
export async function requireConversation(
  db: Db,
  companyId: string,
  pair: { agentUserId: string; conversationId: string; agentEmail: string },
  options: { forUpdate?: boolean } = {},
): Promise<Conversation> {
  const row = await findConversation(db, companyId, pair, options);
  if (!row) {
    throw new NotFoundError(
      `conversation ${JSON.stringify(pair.conversationId)} of agent ${JSON.stringify(pair.agentEmail)} not found`,
    );
  }
  return row;
}
