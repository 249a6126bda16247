/**
 * call/start and call/stop (spec 4.3–4.4, decision 12; beta). A call is `created` by call/create, `live`
 * after start and `stopped` after stop. Start on a live call and stop on a stopped call change nothing.
 */
import type { Db } from '../adapters/db/database.ts';
import {
  findConversation,
  insertLiveConversation,
  transitionConversation,
} from '../adapters/db/repositories/conversations.ts';
import { resolveAgent } from './agents.ts';
import { requireConversation } from './conversations.ts';
import { ConflictError, ValidationError } from './errors.ts';
import type { Principal } from './principal.ts';
import { listProductsFor, requireUsableProduct } from './products.ts';

/** The body of call/stop. */
export interface StopCallInput {
  agent_email: string;
  conversation_id: string;
  metadata?: Record<string, unknown>;
}

/** The body of call/start: stop's fields and the product a new call is filed under. */
export interface StartCallInput extends StopCallInput {
  product_id?: number;
}

/**
 * The product of a call that start creates. The table needs one and the spec's start body names none, so
 * without product_id the caller's only visible active product is used; with several or none, 422.
 */
async function productForNewCall(
  db: Db,
  principal: Principal,
  productId: number | undefined,
): Promise<number> {
  if (productId !== undefined) return productId;
  const active = (await listProductsFor(db, principal)).filter((p) => p.status === 'active');
  const [only] = active;
  if (only && active.length === 1) return only.id;
  throw new ValidationError(
    `is required to start a call that does not exist yet, as the caller sees ${active.length} active products`,
    'product_id',
  );
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
      const productId = await productForNewCall(tx, principal, input.product_id);
      const values = { productId, startTime: Date.now() / 1000, metadata: input.metadata ?? {} };
      if (await insertLiveConversation(tx, companyId, key, values)) return;
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
  });
}
