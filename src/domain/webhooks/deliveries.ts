/** The delivery log of an endpoint, its test message and redelivery (decision 27). */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../adapters/db/database.ts';
import {
  type DeliveryAttempt,
  insertDelivery,
  listDeliveries,
  restartDelivery,
  type WebhookDelivery,
} from '../../adapters/db/repositories/webhook-deliveries.ts';
import type { JobQueue } from '../../adapters/queue/queue.ts';
import type { Principal } from '../access/principal.ts';
import { NotFoundError } from '../errors.ts';
import { WEBHOOK_TEST_TYPE } from '../events/types.ts';
import { enqueueEndpointDeliveries, WEBHOOK_DELIVER_JOB } from './delivery.ts';
import { requireEndpoint } from './endpoints.ts';

/** Deliveries shown per endpoint, newest first. */
const DELIVERY_LOG_LIMIT = 100;

/** A delivery as the API shows it. */
export interface DeliveryView {
  id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: {
    at: string;
    status_code: number | null;
    error: string | null;
    duration_ms: number;
    response: string | null;
  }[];
  next_attempt_at: string | null;
}

function toDeliveryView(row: WebhookDelivery): DeliveryView {
  return {
    id: row.id,
    event_id: row.eventId,
    event_type: row.eventType,
    status: row.status,
    attempts: (row.attempts as DeliveryAttempt[]).map((a) => ({
      at: a.at,
      status_code: a.status_code,
      error: a.error,
      duration_ms: a.duration_ms,
      response: a.excerpt,
    })),
    next_attempt_at: row.status === 'pending' ? (row.nextAttemptAt?.toISOString() ?? null) : null,
  };
}

/** The endpoint's deliveries, newest first. */
export async function listDeliveryViews(
  db: Db,
  principal: Principal,
  endpointId: string,
): Promise<DeliveryView[]> {
  await requireEndpoint(db, principal, endpointId);
  return (await listDeliveries(db, principal.companyId, endpointId, DELIVERY_LOG_LIMIT)).map(toDeliveryView);
}

/** Sends a `webhook.test` message to the endpoint whatever its types; it is not written to the event log. */
export async function sendTestMessage(
  db: Db,
  queue: JobQueue,
  principal: Principal,
  endpointId: string,
): Promise<{ event_id: string }> {
  const endpoint = await requireEndpoint(db, principal, endpointId);
  const id = randomUUID();
  const payload = {
    id,
    type: WEBHOOK_TEST_TYPE,
    created_at: new Date().toISOString(),
    data: { webhook_id: endpoint.id },
  };
  await db.transaction(async (tx) => {
    await insertDelivery(tx, principal.companyId, {
      endpointId,
      eventId: id,
      eventType: WEBHOOK_TEST_TYPE,
      payload,
    });
    await enqueueEndpointDeliveries(tx, queue, principal.companyId, endpointId);
  });
  queue.notify([WEBHOOK_DELIVER_JOB]);
  return { event_id: id };
}

/** Sends a delivery's event again, with the same `webhook-id`. */
export async function redeliver(
  db: Db,
  queue: JobQueue,
  principal: Principal,
  endpointId: string,
  deliveryId: string,
): Promise<void> {
  await requireEndpoint(db, principal, endpointId);
  await db.transaction(async (tx) => {
    if (!(await restartDelivery(tx, principal.companyId, endpointId, deliveryId))) {
      throw new NotFoundError(`delivery ${deliveryId} not found`);
    }
    await enqueueEndpointDeliveries(tx, queue, principal.companyId, endpointId);
  });
  queue.notify([WEBHOOK_DELIVER_JOB]);
}
