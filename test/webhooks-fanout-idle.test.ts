/**
 * The fan-out while no endpoint is enabled anywhere moves its position past the final events in one
 * statement, reading none; an endpoint enabled later still gets every event written after it, and none
 * from before (deliveries go only to endpoints that existed when an event was written).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { and, eq, sql } from 'drizzle-orm';
import { rowsOf } from '../src/adapters/db/prepared.ts';
import { webhookDeliveries } from '../src/adapters/db/schema.ts';
import { fanOutEvents } from '../src/domain/webhooks/fanout.ts';
import { post } from './helpers/calls.ts';
import { addWebhookEndpoint, settleEvents } from './helpers/events.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

for (const backend of BACKENDS) {
  describe(`webhook fan-out without endpoints (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    });
    after(() => h.close());

    const createCall = async (c: TestCompany, conversationId: string) => {
      const res = await post(h, c, '/api/v1/call/create', {
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: conversationId,
      });
      assert.equal(res.statusCode, 200, res.body);
    };
    const position = async () => {
      const [row] = rowsOf<{ txid: string; seq: string }>(
        await h.services.database.db.execute(
          sql`select txid::text as txid, seq::text as seq from webhook_dispatch where id = 1`,
        ),
      );
      return `${row?.txid}/${row?.seq}`;
    };
    const lastEvent = async () => {
      const [row] = rowsOf<{ txid: string; seq: string }>(
        await h.services.database.db.execute(
          sql`select txid::text as txid, seq::text as seq from events order by txid desc, seq desc limit 1`,
        ),
      );
      return `${row?.txid}/${row?.seq}`;
    };

    it('moves past the events without reading them, and an endpoint enabled later gets only the later ones', async () => {
      const c = await h.company();
      await createCall(c, 'before-1');
      await createCall(c, 'before-2');
      await settleEvents(h);
      assert.deepEqual(await fanOutEvents(h.services.database.db, h.services.queue), {
        read: 0,
        endpointsFound: false,
      });
      assert.equal(await position(), await lastEvent());

      const { id: endpointId } = await addWebhookEndpoint(h, c, { url: 'http://127.0.0.1:9/hook' });
      await createCall(c, 'after-1');
      await settleEvents(h);
      const run = await fanOutEvents(h.services.database.db, h.services.queue);
      assert.ok(run.endpointsFound && run.read > 0, JSON.stringify(run));
      const deliveries = await h.services.database.db
        .select({ payload: webhookDeliveries.payload })
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.companyId, c.id), eq(webhookDeliveries.endpointId, endpointId)));
      assert.deepEqual(
        deliveries.map((d) => (d.payload as { data: { conversation_id: string } }).data.conversation_id),
        ['after-1'],
      );
      assert.equal(await position(), await lastEvent());
    });
  });
}
