/**
 * call/start and call/stop (spec 4.3–4.4, decision 12; beta). A call is `created` by call/create, `live`
 * after start and `stopped` after stop. Start on a live call and stop on a stopped call change nothing.
 */
import type { Db } from '../../adapters/db/database.ts';
import {
  findConversation,
  insertLiveConversation,
  transitionConversation,
} from '../../adapters/db/repositories/conversations.ts';
import type { Principal } from '../access/principal.ts';
import { requireUsableProduct } from '../access/products.ts';
import { ConflictError } from '../errors.ts';
import { recordEvent, recordEvents } from '../events/record.ts';
import { resolveAgent } from './agents.ts';
import { requireConversation } from './conversations.ts';

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

/** Marks the pair's call live, creating it when the pair does not exist; a stopped call is a conflict. */
export async function startCall(db: Db, principal: Principal, input: StartCallInput): Promise<void> {
  const { companyId } = principal;
  await db.transaction(async (tx) => {
    const agent = await resolveAgent(tx, companyId, input.agent_email);
    if (input.product_id !== undefined) await requireUsableProduct(tx, principal, input.product_id);
    const key = { agentUserId: agent.id, conversationId: input.conversation_id };
    let row = await findConversation(tx, companyId, key, { forUpdate: true });
    if (!row) {
      // The spec's start body names no product: a call start creates has none until call/create sets one.
      const values = {
        productId: input.product_id ?? null,
        startTime: Date.now() / 1000,
        metadata: input.metadata ?? {},
      };
      const created = await insertLiveConversation(tx, companyId, key, values);
      if (created) {
        // A start that creates the call tells of both: the call exists, and it is live.
        const data = {
          call_id: created.id,
          conversation_id: created.conversationId,
          agent_email: agent.email,
        };
        await recordEvents(tx, companyId, [
          { type: 'call.created', data: { ...data, state: 'created' } },
          { type: 'call.started', data: { ...data, state: 'live' } },
        ]);
        return;
      }
      // A concurrent start (or create) made the pair first: continue with its row.
      row = await requireConversation(
        tx,
        companyId,
        { ...key, agentEmail: input.agent_email },
        { forUpdate: true },
      );
    }
    if (row.state === 'stopped') {
      throw new ConflictError(
        `conversation ${JSON.stringify(input.conversation_id)} is stopped; a stopped call cannot start again`,
      );
    }
    if (row.state === 'live') return;
    await transitionConversation(tx, companyId, row.id, {
      state: 'live',
      metadata: input.metadata,
      ...(input.product_id !== undefined ? { productId: input.product_id } : {}),
    });
    await recordEvent(tx, companyId, 'call.started', {
      call_id: row.id,
      conversation_id: row.conversationId,
      agent_email: agent.email,
      state: 'live',
    });
  });
}

/** Marks the pair's call stopped and merges metadata; a stopped call stays as it is. */
export async function stopCall(db: Db, principal: Principal, input: StopCallInput): Promise<void> {
  const { companyId } = principal;
  await db.transaction(async (tx) => {
    const agent = await resolveAgent(tx, companyId, input.agent_email);
    const row = await requireConversation(
      tx,
      companyId,
      { agentUserId: agent.id, conversationId: input.conversation_id, agentEmail: input.agent_email },
      { forUpdate: true },
    );
    if (row.state === 'stopped') return;
    await transitionConversation(tx, companyId, row.id, { state: 'stopped', metadata: input.metadata });
    await recordEvent(tx, companyId, 'call.stopped', {
      call_id: row.id,
      conversation_id: row.conversationId,
      agent_email: agent.email,
      state: 'stopped',
    });
  });
}
