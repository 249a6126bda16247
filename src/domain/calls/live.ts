/**
 * The deprecated live-conversation endpoints (spec 4.7–4.8, decision 13): they store a tag on the call found
 * by conversation_id alone, within the caller's company.
 */
import type { Db } from '../../adapters/db/database.ts';
import { writeTagsOfCall } from '../../adapters/db/repositories/call-writes.ts';
import type { TagValue } from '../../adapters/db/repositories/tags.ts';
import type { Principal } from '../access/principal.ts';
import { ValidationError } from '../errors.ts';
import { conversationIdNotFoundError, findConversationByClientId } from './conversations.ts';

/** The tag key `{"closed": …}` of data/sale is stored under. */
export const SALE_CLOSED_TAG = 'sale_closed';
/** The tag key `{"account_id": …}` of data/customer is stored under. */
export const CUSTOMER_ACCOUNT_TAG = 'customer_account_id';

/**
 * Finds the one call with this conversation_id, then writes the tag as POST /calls/{id}/tags does: one
 * statement that locks the call, stores the tag, moves its updated_at and writes `call.updated` with the
 * state read under that lock (so a stop committed meanwhile is not told as the tag's state). A call erased
 * between the two is not found.
 */
async function storeLiveTag(
  db: Db,
  principal: Principal,
  conversationId: string,
  tag: TagValue,
): Promise<void> {
  const conversation = await findConversationByClientId(db, principal.companyId, conversationId, {
    hint: 'use call/add_tags with agent_email',
  });
  const written = await writeTagsOfCall(db, principal.companyId, {
    callUuid: conversation.id,
    agentUserId: undefined,
    tags: [tag],
  });
  if (!written) throw conversationIdNotFoundError(conversationId);
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
