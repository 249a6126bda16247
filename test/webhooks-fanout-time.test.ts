/**
 * An endpoint gets the events written after it was made, and none from before, to the stored times'
 * microsecond: an event of the same millisecond as the endpoint is on the side of it where it belongs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { and, eq, sql } from 'drizzle-orm';
import { rowsOf } from '../src/adapters/db/prepared.ts';
import { webhookDeliveries } from '../src/adapters/db/schema.ts';
import { fanOutEvents } from '../src/domain/webhooks/fanout.ts';
import { addWebhookEndpoint, settleEvents } from './helpers/events.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

for (const backend of BACKENDS) {
  describe(`webhook fan-out and the endpoint's creation time (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    });
    after(() => h.close());

    it('sends an event of the same millisecond written after the endpoint, not one written before', async () => {
      const db = h.services.database.db;
      const c = await h.company();
      await settleEvents(h);
      await fanOutEvents(db, h.services.queue);
      const { id: endpointId } = await addWebhookEndpoint(h, c, { url: 'http://127.0.0.1:9/hook' });
      // The endpoint made at T (a millisecond and 400 µs); events at T - 100 µs, T + 300 µs and T + 1 ms,
      // written in one statement behind the service so that nothing fans them out before their times are set.
      const [row] = rowsOf<{ t: string }>(
        await db.execute(
          sql`select (date_trunc('milliseconds', now()) + interval '400 microseconds')::text as t`,
        ),
      );
      const t = String(row?.t);
      await db.execute(
        sql`update webhook_endpoints set created_at = ${t}::timestamptz where id = ${endpointId}::uuid`,
      );
      await db.execute(sql`
        insert into events (company_id, type, data, created_at)
        select ${c.id}::uuid, 'call.updated', jsonb_build_object('call_id', label), ${t}::timestamptz + shift
        from (values ('before', interval '-100 microseconds'), ('same-ms', interval '300 microseconds'),
          ('next-ms', interval '1 millisecond')) as v(label, shift)`);
      await settleEvents(h);
      await fanOutEvents(db, h.services.queue, true);
      const deliveries = await db
        .select({ payload: webhookDeliveries.payload })
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.companyId, c.id), eq(webhookDeliveries.endpointId, endpointId)));
      const sent = deliveries.map((d) => (d.payload as { data: { call_id: string } }).data.call_id).sort();
      assert.deepEqual(sent, ['next-ms', 'same-ms']);
    });
  });
}
