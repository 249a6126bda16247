/**
 * Per-company retention (decision 26): a company may set a number of days; a daily sweep on the job queue
 * erases its calls whose start_time is older, each the same way as DELETE /api/v1/calls/{id}.
 */
import { type Company, setRetentionDays } from '../../adapters/db/repositories/companies.ts';
import { callsStartedBefore, companiesWithRetention } from '../../adapters/db/repositories/erasure.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { UUID } from '../uuid.ts';
import { deleteObjects, type ErasureDeps, eraseCallById } from './erase.ts';

/** The job kind (and dedupe key) of the retention sweep. */
export const RETENTION_SWEEP_JOB = 'calls.retention-sweep';
/** How often the sweep is queued. */
export const RETENTION_SWEEP_EVERY_MS = 24 * 60 * 60 * 1000;
/** Calls erased per batch: each is its own transaction; the batch bounds one query. */
const BATCH = 100;
/** The longest retention accepted: 100 years. */
export const MAX_RETENTION_DAYS = 36_500;

/** Sets or clears (null) the company's retention period; returns the company. */
export async function updateRetention(
  deps: Pick<ErasureDeps, 'db'>,
  companyId: string,
  days: number | null,
): Promise<Company> {
  if (days !== null && (!Number.isInteger(days) || days < 1 || days > MAX_RETENTION_DAYS)) {
    throw new ValidationError(
      `must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}`,
      'retention_days',
    );
  }
  const company = UUID.test(companyId) ? await setRetentionDays(deps.db, companyId, days) : undefined;
  if (!company) throw new NotFoundError(`company ${companyId} not found`);
  return company;
}

/** Erases every call older than its company's retention period; returns how many. */
export async function sweepRetention(deps: ErasureDeps, nowSeconds = Date.now() / 1000): Promise<number> {
  let erased = 0;
  for (const company of await companiesWithRetention(deps.db)) {
    const before = nowSeconds - company.retentionDays * 86_400;
    for (;;) {
      const ids = await callsStartedBefore(deps.db, company.id, before, BATCH);
      if (ids.length === 0) break;
      for (const id of ids) {
        const done = await eraseCallById(deps, company.id, id);
        if (!done) continue;
        erased++;
        try {
          await deleteObjects(deps.storage, done.objectKeys);
        } catch {
          // The job queued with the erasure retries.
        }
      }
    }
  }
  return erased;
}
