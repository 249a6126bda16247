/** Finding the agent of a call by agent_email (spec 2.1, decisions 7 and 10). */
import type { Db } from '../../adapters/db/database.ts';
import { findActiveUsersByEmail } from '../../adapters/db/repositories/users.ts';
import { AgentConflictError, type DomainError, NotFoundError } from '../errors.ts';

/** Why agent_email names no agent: it matches no active user (`ids` empty) or several (their ids). */
export function agentLookupError(agentEmail: string, ids: readonly string[]): DomainError {
  if (ids.length === 0) {
    return new NotFoundError(`agent_email ${JSON.stringify(agentEmail)} matches no active user`);
  }
  return new AgentConflictError(agentEmail, [...ids]);
}

/** The one active user of the company that holds agent_email, compared without regard to case. */
export async function resolveAgent(
  db: Db,
  companyId: string,
  agentEmail: string,
): Promise<{ id: string; email: string }> {
  const matches = await findActiveUsersByEmail(db, companyId, agentEmail);
  const [only] = matches;
  if (!only || matches.length > 1) {
    throw agentLookupError(
      agentEmail,
      matches.map((u) => u.id),
    );
  }
  return { id: only.id, email: only.email };
}
