/**
 * Writing events (decision 27): called inside the transaction of the change, so the change and its event
 * commit together or not at all (a transactional outbox).
 */
import type { Db } from '../../adapters/db/database.ts';
import { type CallRef, findCallRefs, insertEvents } from '../../adapters/db/repositories/events.ts';
import type { EventData, EventType } from './types.ts';

/** Writes one event of the company in `tx`, the transaction of the change it tells of. */
export async function recordEvent(
  tx: Db,
  companyId: string,
  type: EventType,
  data: EventData,
): Promise<void> {
  await insertEvents(tx, companyId, [{ type, data }]);
}

/** The ids every event about a call carries (decision 21): `call_id`, `conversation_id`, `agent_email`. */
export async function callRef(tx: Db, companyId: string, conversationUuid: string): Promise<CallRef> {
  const ref = (await findCallRefs(tx, companyId, [conversationUuid])).get(conversationUuid);
  if (!ref) throw new Error(`conversation ${conversationUuid} not found for its event`);
  return ref;
}

/** The call refs of several conversations, by conversation uuid. */
export async function callRefs(
  tx: Db,
  companyId: string,
  conversationUuids: readonly string[],
): Promise<Map<string, CallRef>> {
  return findCallRefs(tx, companyId, conversationUuids);
}

export type { CallRef };
