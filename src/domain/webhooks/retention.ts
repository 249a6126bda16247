/**
 * Delivery retention: a delivery is kept as long as its event is (EVENT_RETENTION_DAYS), then deleted by a
 * periodic task once it is no longer pending. Without it the table, which holds a copy of every event sent
 * to every endpoint, grew for ever, and kept the ids of erased calls in its copies.
 */
import type { Db } from '../../adapters/db/database.ts';
import { purgeOldDeliveries } from '../../adapters/db/repositories/webhook-deliveries.ts';
import { deleteInBatches } from '../batches.ts';

/** The periodic task's name. */
export const PURGE_DELIVERIES_TASK = 'webhooks.purge';

/** Deletes every finished delivery older than `retentionDays`; returns how many. Idempotent, safe in several processes. */
export async function purgeExpiredDeliveries(db: Db, retentionDays: number): Promise<number> {
  return deleteInBatches((limit) => purgeOldDeliveries(db, retentionDays, limit));
}
