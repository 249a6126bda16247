/** Finding the agent of a call by agent_email (spec 2.1, decisions 7 and 10). */
import type { Db } from '../../adapters/db/database.ts';
import { findActiveUsersByEmail } from '../../adapters/db/repositories/users.ts';
import { AgentConflictError, NotFoundError } from '../errors.ts';

/** The one active user of the company that holds agent_email, compared without regard to case. */
export async function resolveAgent(
  db: Db,
  companyId: string,
  agentEmail: string,
): Promise<{ id: string; email: string }> {
  const matches = await findActiveUsersByEmail(db, companyId, agentEmail);
  const [only] = matches;
  if (!only) throw new NotFoundError(`agent_email ${JSON.stringify(agentEmail)} matches no active user`);
  if (matches.length > 1) {
    throw new AgentConflictError(
      agentEmail,
      matches.map((u) => u.id),
    );
  }
  return { id: only.id, email: only.email };
}
