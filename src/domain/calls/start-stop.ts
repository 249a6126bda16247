/**
 * call/start and call/stop (spec 4.3–4.4, decision 12; beta). A call is `created` by call/create, `live`
 * after start and `stopped` after stop. Start on a live call and stop on a stopped call change nothing.
 */
import type { Db } from '../../adapters/db/database.ts';
import { writeStartedCall, writeStoppedCall } from '../../adapters/db/repositories/call-writes.ts';
import type { Principal } from '../access/principal.ts';
import { callCheckError } from './checks.ts';

/** The body of call/stop. */
export interface StopCallInput {
  agent_email: string;
  conversation_id: string;
  metadata?: Record<string, unknown>;
}

/** The body of call/start: stop's fields and, as an extension, the product a new call is filed under. */
export interface StartCallInput extends StopCallInput {
  product_id?: number;
}

/**
 * Marks the pair's call live, creating it when the pair does not exist; a stopped call is a conflict. One
 * statement: the agent, the product when given, the call locked (or created live; a start that creates the
 * call tells of both, `call.created` and `call.started`), the transition and its event. The spec's start
 * body names no product: a call start creates has none until call/create sets one.
 */
export async function startCall(db: Db, principal: Principal, input: StartCallInput): Promise<void> {
  const names = {
    agentEmail: input.agent_email,
    conversationId: input.conversation_id,
    productId: input.product_id,
  };
  const written = await writeStartedCall(db, principal.companyId, {
    ...names,
    viewer: principal,
    startTime: Date.now() / 1000,
    metadata: input.metadata,
  });
  if (written.outcome !== 'ok') throw callCheckError(written, names);
}

/** Marks the pair's call stopped and merges metadata; a stopped call stays as it is. One statement. */
export async function stopCall(db: Db, principal: Principal, input: StopCallInput): Promise<void> {
  const names = { agentEmail: input.agent_email, conversationId: input.conversation_id };
  const written = await writeStoppedCall(db, principal.companyId, { ...names, metadata: input.metadata });
  if (written.outcome !== 'ok') throw callCheckError(written, names);
}
