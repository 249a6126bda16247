/**
 * The deprecated live-conversation endpoints (spec 4.7–4.8, decision 13): they store a tag on the call found
 * by conversation_id alone, within the caller's company.
 */
import type { Db } from '../../adapters/db/database.ts';
import { touchConversation } from '../../adapters/db/repositories/conversations.ts';
import { type TagValue, upsertTags } from '../../adapters/db/repositories/tags.ts';
import type { Principal } from '../access/principal.ts';
import { ValidationError } from '../errors.ts';
import { callRef, recordEvent } from '../events/record.ts';
import { findConversationByClientId } from './conversations.ts';

/** The tag key `{"closed": …}` of data/sale is stored under. */
export const SALE_CLOSED_TAG = 'sale_closed';
/** The tag key `{"account_id": …}` of data/customer is stored under. */
export const CUSTOMER_ACCOUNT_TAG = 'customer_account_id';

async function storeLiveTag(
  db: Db,
  principal: Principal,
  conversationId: string,
  tag: TagValue,
): Promise<void> {
  await db.transaction(async (tx) => {
    // Locked: the event's state is the one the tag was stored on, not one a stop committed meanwhile.
    const conversation = await findConversationByClientId(tx, principal.companyId, conversationId, {
      hint: 'use call/add_tags with agent_email',
      lock: true,
    });
    await upsertTags(tx, principal.companyId, conversation.id, [tag]);
    // Its tags are part of the call (decision 27): updated_at moves, as with add_tags (migration 0031).
    await touchConversation(tx, principal.companyId, conversation.id);
    const ref = await callRef(tx, principal.companyId, conversation.id);
    await recordEvent(tx, principal.companyId, 'call.updated', { ...ref, state: conversation.state });
  });
}

/** data/sale: stores whether the sale was closed as the boolean tag sale_closed. */
export async function recordSale(
  db: Db,
  principal: Principal,
  conversationId: string,
  closed: boolean | null | undefined,
): Promise<void> {
  if (closed === undefined || closed === null) throw new ValidationError('no data provided');
  await storeLiveTag(db, principal, conversationId, { key: SALE_CLOSED_TAG, type: 'boolean', value: closed });
}

/** data/customer: stores the customer's account id as the string tag customer_account_id. */
export async function recordCustomer(
  db: Db,
  principal: Principal,
  conversationId: string,
  accountId: string | null | undefined,
): Promise<void> {
  if (accountId === undefined || accountId === null) throw new ValidationError('no data provided');
  await storeLiveTag(db, principal, conversationId, {
    key: CUSTOMER_ACCOUNT_TAG,
    type: 'string',
    value: accountId,
  });
}
