/**
 * An endpoint gets the events written after it was made, and none from before, to the stored times'
 * microsecond: an event of the same millisecond as the endpoint is on the side of it where it belongs. Nor
 * the events written while it was disabled, even when the fan-out reaches them after it was enabled again
 * (decision 27: "events of that time are not sent later"); those written before and after that period, it
 * gets.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { and, eq, sql } from 'drizzle-orm';
import { rowsOf } from '../src/adapters/db/prepared.ts';
import { webhookDeliveries } from '../src/adapters/db/schema.ts';
import { fanOutEvents } from '../src/domain/webhooks/fanout.ts';
import { post } from './helpers/calls.ts';
import { addWebhookEndpoint, settleEvents } from './helpers/events.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

for (const backend of BACKENDS) {
  describe(`webhook fan-out and the endpoint's creation time (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    });
    after(() => h.close());

    /** Fans out every final event, then lists the endpoint's deliveries by `field` of their events, sorted. */
    async function fanOutAndList(companyId: string, endpointId: string, field: string): Promise<string[]> {
      await settleEvents(h);
      await fanOutEvents(h.services.database.db, h.services.queue, true);
      const deliveries = await h.services.database.db
        .select({ payload: webhookDeliveries.payload })
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.companyId, companyId), eq(webhookDeliveries.endpointId, endpointId)));
      return deliveries
        .map((d) => String((d.payload as { data: Record<string, unknown> }).data[field]))
        .sort();
    }

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
      assert.deepEqual(await fanOutAndList(c.id, endpointId, 'call_id'), ['next-ms', 'same-ms']);
    });

    it('sends none of the events written while it was disabled, however late the fan-out reaches them', async () => {
      const db = h.services.database.db;
      const c = await h.company();
      await settleEvents(h);
      await fanOutEvents(db, h.services.queue);
      const { id: endpointId, key } = await addWebhookEndpoint(h, c, { url: 'http://127.0.0.1:9/hook' });
      const create = async (conversationId: string) =>
        assert.equal(
          (
            await post(h, c, '/api/v1/call/create', {
              agent_email: c.agent.email,
              product_id: c.productId,
              conversation_id: conversationId,
            })
          ).statusCode,
          200,
        );
      const patch = async (enabled: boolean) =>
        assert.equal(
          (
            await h.request({
              method: 'PATCH',
              url: `/api/v1/webhooks/${endpointId}`,
              key,
              body: { enabled },
            })
          ).statusCode,
          200,
        );
      // The fan-out runs only at the end, as when it lags (a worker restarting, a long transaction).
      await create('before');
      await patch(false);
      await create('during');
      await patch(true);
      await create('after');
      assert.deepEqual(await fanOutAndList(c.id, endpointId, 'conversation_id'), ['after', 'before']);
    });
  });
}
