/**
 * The optional link of a new handoff record to a conversation of the caller's company. The client names
 * its conversation by `conversation_id`, which is unique only per agent (spec 2.1), so `agent_email`
 * may be sent too to pick one; without it, a conversation_id held by several agents is ambiguous (409),
 * as for the live endpoints (decision 13).
 */
import type { Db } from '../../adapters/db/database.ts';
import type { Principal } from '../access/principal.ts';
import { resolveAgent } from '../calls/agents.ts';
import { findConversationByClientId } from '../calls/conversations.ts';
import { ValidationError } from '../errors.ts';

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
  const agent =
    input.agent_email === undefined
      ? undefined
      : await resolveAgent(db, principal.companyId, input.agent_email);
  const conversation = await findConversationByClientId(db, principal.companyId, conversationId, {
    agentUserId: agent?.id,
    hint: 'send agent_email to choose',
  });
  return conversation.id;
}
