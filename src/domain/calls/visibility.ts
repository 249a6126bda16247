/**
 * Which calls a key may read (decision 22): a key whose user is an `admin` sees every call of its
 * company; an `agent`'s key sees only the calls where that user is the agent. A call that is not visible
 * does not exist for the caller (404). The scope is checked before, at the edge (403).
 */
import type { Db } from '../../adapters/db/database.ts';
import { type CallRow, findCall } from '../../adapters/db/repositories/call-reads.ts';
import type { Principal } from '../access/principal.ts';
import { NotFoundError } from '../errors.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `id` has the form of a call id (a UUID); any other string is no call. */
export function isCallId(id: string): boolean {
  return UUID.test(id);
}

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
 * The call `id` (decision 21: `conversations.id`) when the principal may see it; otherwise NotFoundError,
 * the same for an id of another company, of another agent, of an erased call, or not an id at all (ids
 * are opaque to clients, so a malformed one is simply not found).
 */
export async function findVisibleCall(db: Db, principal: Principal, id: string): Promise<CallRow> {
  const row = isCallId(id) ? await findCall(db, principal.companyId, id.toLowerCase()) : undefined;
  if (!row || !canSeeCall(principal, row.agentUserId)) throw new NotFoundError(`call ${id} not found`);
  return row;
}
