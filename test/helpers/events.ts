/** Test helpers of the event log and its webhooks. */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import type { TestCompany } from './fixtures.ts';
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

/** Subscribes a webhook endpoint of `company` to `url` with a new admin key; returns its id and the key. */
export async function addWebhookEndpoint(
  h: Harness,
  company: TestCompany,
  body: { url: string; types?: string[] },
): Promise<{ id: string; key: string }> {
  const { key } = await company.addKey(company.admin.id, ['webhooks']);
  const res = await h.request({ method: 'POST', url: '/api/v1/webhooks', key, body });
  assert.equal(res.statusCode, 201, res.body);
  return { id: (res.json() as { id: string }).id, key };
}
