/**
 * The optional link of a new handoff record to a conversation of the caller's company. The client names
 * its conversation by `conversation_id`, which is unique only per agent (spec 2.1), so `agent_email`
 * may be sent too to pick one; without it, a conversation_id held by several agents is ambiguous (409),
 * as for the live endpoints (decision 13).
 */
import type { Db } from '../adapters/db/database.ts';
import { findConversationsByClientId } from '../adapters/db/repositories/call-handoffs.ts';
import { findActiveUsersByEmail } from '../adapters/db/repositories/users.ts';
import { AgentConflictError, ConflictError, NotFoundError, ValidationError } from './errors.ts';
import type { Principal } from './principal.ts';

/** The conversation (its internal uuid) the new record links to, or undefined when none was named. */
export async function resolveHandoffConversation(
  db: Db,
  principal: Principal,
  input: { conversation_id?: string | undefined; agent_email?: string | undefined },
): Promise<string | undefined> {
  const conversationId = input.conversation_id;
  if (conversationId === undefined) {
    if (input.agent_email !== undefined) {
      throw new ValidationError('only allowed together with conversation_id', 'agent_email');
    }
    return undefined;
  }
  let agentUserIds: string[] | undefined;
  if (input.agent_email !== undefined) {
    const agents = await findActiveUsersByEmail(db, principal.companyId, input.agent_email);
    if (agents.length === 0) throw new NotFoundError(`agent ${JSON.stringify(input.agent_email)} not found`);
    if (agents.length > 1) {
      throw new AgentConflictError(
        input.agent_email,
        agents.map((a) => a.id),
      );
    }
    agentUserIds = agents.map((a) => a.id);
  }
  const found = await findConversationsByClientId(db, principal.companyId, conversationId, agentUserIds);
  const [first] = found;
  if (!first) throw new NotFoundError(`conversation ${JSON.stringify(conversationId)} not found`);
  if (found.length > 1) {
    throw new ConflictError(
      `conversation_id ${JSON.stringify(conversationId)} is ambiguous: more than one agent has a ` +
        'conversation with it; send agent_email to choose',
    );
  }
  return first.uuid;
}
