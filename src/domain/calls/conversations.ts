/**
 * Finding a conversation: by its (agent, conversation_id) pair, or by conversation_id alone, which is unique
 * only per agent (spec 2.1), so several agents holding it is a 409 (decision 13).
 */
import type { Db } from '../../adapters/db/database.ts';
import {
  type Conversation,
  findConversationsByConversationId,
} from '../../adapters/db/repositories/conversations.ts';
import { ConflictError, NotFoundError } from '../errors.ts';

/** The error of a pair (agent_email, conversation_id) that names no call. */
export function conversationNotFoundError(conversationId: string, agentEmail: string): NotFoundError {
  return new NotFoundError(
    `conversation ${JSON.stringify(conversationId)} of agent ${JSON.stringify(agentEmail)} not found`,
  );
}

/** The error of a conversation_id that names no call of the company. */
export function conversationIdNotFoundError(conversationId: string): NotFoundError {
  return new NotFoundError(`conversation ${JSON.stringify(conversationId)} not found`);
}

/**
 * The one conversation of the company with this conversation_id, of the agent given or of any agent:
 * NotFoundError when there is none, ConflictError when several agents have one (`hint` says how to choose).
 */
export async function findConversationByClientId(
  db: Db,
  companyId: string,
  conversationId: string,
  options: { agentUserId?: string | undefined; hint: string },
): Promise<Conversation> {
  const rows = await findConversationsByConversationId(db, companyId, conversationId, {
    agentUserId: options.agentUserId,
    limit: 2,
  });
  const [only] = rows;
  if (!only) throw conversationIdNotFoundError(conversationId);
  if (rows.length > 1) {
    throw new ConflictError(
      `conversation_id ${JSON.stringify(conversationId)} is ambiguous: more than one agent has a ` +
        `conversation with it; ${options.hint}`,
    );
  }
  return only;
}
