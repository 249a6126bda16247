/** Test helpers of the event log. */
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import type { Harness } from './harness.ts';

function rowsOf(result: unknown): Record<string, unknown>[] {
  return (result as { rows: Record<string, unknown>[] }).rows;
}

/**
 * Waits until every transaction that began before this call has ended, so that every event written so
 * far is served. On a PostgreSQL server shared with other work, a long transaction anywhere delays events
 * (never loses them): tests that expect to read what they just wrote wait here first.
 */
export async function settleEvents(h: Harness, timeoutMs = 60_000): Promise<void> {
  const db = h.services.database.db;
  const [mark] = rowsOf(await db.execute(sql`select pg_current_xact_id()::text as x`));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = rowsOf(
      await db.execute(
        sql`select pg_snapshot_xmin(pg_current_snapshot()) > ${String(mark?.x)}::xid8 as done`,
      ),
    );
    if (row?.done === true) return;
    if (Date.now() > deadline) throw new Error('events did not become final in time');
    await sleep(20);
  }
}
