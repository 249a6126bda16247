/**
 * Webhook deliveries are kept as long as their events (EVENT_RETENTION_DAYS), then deleted by the worker's
 * hourly task once they are no longer pending: delivered and failed ones older than that go, pending ones
 * (a redelivery still under way) and younger ones stay. Before, the table kept every delivery for ever.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../src/adapters/db/prepared.ts';
import { fanOutEvents } from '../src/domain/webhooks/fanout.ts';
import { PURGE_DELIVERIES_TASK } from '../src/domain/webhooks/retention.ts';
import { periodicTasks } from '../src/worker/jobs.ts';
import { post } from './helpers/calls.ts';
import { addWebhookEndpoint, settleEvents } from './helpers/events.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

for (const backend of BACKENDS) {
  describe(`webhook delivery retention (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend, { WEBHOOK_ALLOW_PRIVATE: 'true', EVENT_RETENTION_DAYS: '30' });
    });
    after(() => h.close());

    it('deletes finished deliveries older than the events are kept, and keeps pending and younger ones', async () => {
      const db = h.services.database.db;
      const c = await h.company();
      const { id: endpointId, key } = await addWebhookEndpoint(h, c, { url: 'http://127.0.0.1:9/hook' });
      // Five events, one delivery each; their conversation ids name what the test makes of them.
      const labels = ['old-delivered', 'old-failed', 'old-pending', 'young-delivered', 'edge-delivered'];
      for (const label of labels) {
        const res = await post(h, c, '/api/v1/call/create', {
          agent_email: c.agent.email,
          product_id: c.productId,
          conversation_id: label,
        });
        assert.equal(res.statusCode, 200, res.body);
      }
      await settleEvents(h);
      await fanOutEvents(db, h.services.queue, true);
      // Ages and outcomes by label: 31 days, and 29 days 23 hours for the one just inside the retention.
      await db.execute(sql`
        update webhook_deliveries d set
          status = v.status,
          created_at = now() - v.age,
          next_attempt_at = case when v.status = 'pending' then now() + interval '1 hour' end
        from (values
          ('old-delivered', 'delivered', interval '31 days'), ('old-failed', 'failed', interval '31 days'),
          ('old-pending', 'pending', interval '31 days'), ('young-delivered', 'delivered', interval '1 day'),
          ('edge-delivered', 'delivered', interval '29 days 23 hours')
        ) as v(label, status, age)
        where d.company_id = ${c.id}::uuid and d.endpoint_id = ${endpointId}::uuid
          and d.payload->'data'->>'conversation_id' = v.label`);
      const kept = async () => {
        const res = await h.request({ method: 'GET', url: `/api/v1/webhooks/${endpointId}/deliveries`, key });
        assert.equal(res.statusCode, 200, res.body);
        const deliveries = (res.json() as { deliveries: { event_type: string; status: string }[] })
          .deliveries;
        return deliveries.map((d) => d.status).sort();
      };
      assert.deepEqual(await kept(), ['delivered', 'delivered', 'delivered', 'failed', 'pending']);

      const task = periodicTasks(h.services).find((t) => t.name === PURGE_DELIVERIES_TASK);
      assert.ok(task, 'the worker runs the delivery purge');
      assert.equal(task.everyMs, 3600_000);
      await task.run();
      const [left] = rowsOf<{ labels: string[] }>(
        await db.execute(sql`
          select array_agg(payload->'data'->>'conversation_id' order by payload->'data'->>'conversation_id')::text[] as labels
          from webhook_deliveries where company_id = ${c.id}::uuid and endpoint_id = ${endpointId}::uuid`),
      );
      assert.deepEqual(left?.labels, ['edge-delivered', 'old-pending', 'young-delivered']);
      assert.deepEqual(await kept(), ['delivered', 'delivered', 'pending']);
      // Idempotent: a second run (another process's, or the next hour's) finds nothing more.
      await task.run();
      assert.deepEqual(await kept(), ['delivered', 'delivered', 'pending']);
    });
  });
}
