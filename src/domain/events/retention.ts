/**
 * Event retention (decision 27): events older than EVENT_RETENTION_DAYS are deleted in batches by a
 * periodic task; how far each company's log was deleted is recorded, so that an older cursor is a 410
 * rather than a silent gap.
 */
import type { Db } from '../../adapters/db/database.ts';
import { purgeOldEvents } from '../../adapters/db/repositories/events.ts';
import { deleteInBatches } from '../batches.ts';

/** The periodic task's name. */
export const PURGE_EVENTS_TASK = 'events.purge';

/** Deletes every event older than `retentionDays`; returns how many. Idempotent, safe in several processes. */
export async function purgeExpiredEvents(db: Db, retentionDays: number): Promise<number> {
  return deleteInBatches((limit) => purgeOldEvents(db, retentionDays, limit));
}
