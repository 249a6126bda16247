/**
 * Which calls a key may read (decision 22): a key whose user is an `admin` sees every call of its
 * company; an `agent`'s key sees only the calls where that user is the agent. A call that is not visible
 * does not exist for the caller (404). The scope is checked before, at the edge (403).
 */
import type { Db } from '../../adapters/db/database.ts';
import { type CallRow, findCall } from '../../adapters/db/repositories/call-reads.ts';
import type { Principal } from '../access/principal.ts';
import { NotFoundError } from '../errors.ts';
import { UUID } from '../uuid.ts';

/** The agent user whose calls alone the principal sees, or undefined when it sees the whole company's. */
export function visibleAgentOf(principal: Principal): string | undefined {
  return principal.role === 'admin' ? undefined : principal.userId;
}

/** True when the principal may see a call of its company made by `agentUserId`. */
export function canSeeCall(principal: Principal, agentUserId: string): boolean {
  const only = visibleAgentOf(principal);
  return only === undefined || only === agentUserId;
}

/**
 * What `find` answers for the call `id` (decision 21: `conversations.id`), asked with the id in the
 * database's form and the agent whose calls alone the principal sees (undefined: the whole company's);
 * NotFoundError when it answers nothing, the same for an id of another company, of another agent, of an
 * erased call, or not an id at all (ids are opaque to clients, so a malformed one is simply not found).
 */
export async function findVisible<T>(
  principal: Principal,
  id: string,
  find: (callUuid: string, agentUserId: string | undefined) => Promise<T | undefined>,
): Promise<T> {
  const row = UUID.test(id) ? await find(id.toLowerCase(), visibleAgentOf(principal)) : undefined;
  if (row === undefined) throw new NotFoundError(`call ${id} not found`);
  return row;
}

/** The call `id` when the principal may see it; otherwise NotFoundError (`findVisible`). */
export async function findVisibleCall(db: Db, principal: Principal, id: string): Promise<CallRow> {
  return findVisible(principal, id, async (callUuid) => {
    const row = await findCall(db, principal.companyId, callUuid);
    return row && canSeeCall(principal, row.agentUserId) ? row : undefined;
  });
}
