/**
 * Sending deliveries (decision 27). Each endpoint has at most one delivery job queued or running (its
 * dedupe key), which sends that endpoint's due deliveries one after another: a slow or dead endpoint holds
 * only its own job, never the others'. A failed attempt is retried on the schedule, then marked failed; an
 * endpoint whose deliveries have all failed for 5 days is disabled, with a `webhook.disabled` event.
 */
import type { Db } from '../../adapters/db/database.ts';
import {
  type ClaimedDelivery,
  claimDueDeliveries,
  type DeliveryAttempt,
  failPendingDeliveries,
  recordAttempt,
  recordDelivered,
  releaseDeliveries,
  type SendingEndpoint,
} from '../../adapters/db/repositories/webhook-deliveries.ts';
import { findEndpoint, updateEndpoint } from '../../adapters/db/repositories/webhooks.ts';
import { type SendResult, sendWebhook } from '../../adapters/http/webhook-sender.ts';
import type { JobQueue } from '../../adapters/queue/queue.ts';
import { recordEvent } from '../events/record.ts';
import { webhookHeaders } from './signing.ts';

/** The job that sends an endpoint's due deliveries; payload `{endpointId}`. */
export const WEBHOOK_DELIVER_JOB = 'webhook.deliver';

/** Seconds after the first failure, with no success since, before an endpoint is disabled. */
export const DISABLE_AFTER_SECONDS = 5 * 24 * 3600;

/** How long one delivery job keeps sending before it leaves the rest to the next job. */
const DELIVERY_BUDGET_MS = 10_000;

/** Seconds beyond the receiver's time limit allowed for the database work around one attempt. */
const LEASE_MARGIN_SECONDS = 10;

/**
 * Seconds a delivery job's claim lasts: its budget, the last attempt's time limit and a margin. Kept short
 * because it is how long an endpoint waits after its worker process died (kill -9, a lost machine).
 */
export function deliveryJobLeaseSeconds(options: Pick<DeliveryOptions, 'timeoutMs' | 'budgetMs'>): number {
  return (
    Math.ceil(((options.budgetMs ?? DELIVERY_BUDGET_MS) + options.timeoutMs) / 1000) + LEASE_MARGIN_SECONDS
  );
}

/** How one process sends. */
export interface DeliveryOptions {
  /** Seconds before retry n (1-based) after a failed attempt n; after the last, the delivery failed. */
  retrySchedule: readonly number[];
  timeoutMs: number;
  allowPrivate: boolean;
  /** WEBHOOK_DNS_SERVERS; the system's name servers when empty or absent. */
  dnsServers?: readonly string[];
  /** How long one job keeps sending before it leaves the rest to the next job. */
  budgetMs?: number;
}

/** What delivery needs. */
export interface DeliveryDeps {
  db: Db;
  log: { warn(details: object, message: string): void };
  options: DeliveryOptions;
  /** The clock of signatures (tests may fix it). */
  now?: () => number;
}

/** Queues the endpoint's delivery job unless one is queued already; call queue.notify() after commit. */
export function enqueueEndpointDeliveries(
  db: Db,
  queue: JobQueue,
  companyId: string,
  endpointId: string,
): Promise<boolean> {
  return queue.enqueue(db, {
    kind: WEBHOOK_DELIVER_JOB,
    companyId,
    payload: { endpointId },
    dedupeKey: `webhook:${endpointId}`,
    // A job that is sending already may have made its last claim before these deliveries committed.
    rerunIfRunning: true,
    maxAttempts: 100,
  });
}

function secretsOf(endpoint: SendingEndpoint): string[] {
  const previous =
    endpoint.previousSecret &&
    endpoint.previousSecretUntil &&
    endpoint.previousSecretUntil.getTime() > Date.now()
      ? [endpoint.previousSecret]
      : [];
  return [endpoint.secret, ...previous];
}

async function recordFailure(
  deps: DeliveryDeps,
  endpoint: SendingEndpoint,
  deliveryId: string,
  attempt: DeliveryAttempt,
  retryIn: number | undefined,
): Promise<void> {
  const { companyId, id } = endpoint;
  await deps.db.transaction(async (tx) => {
    await recordAttempt(
      tx,
      companyId,
      deliveryId,
      attempt,
      retryIn === undefined ? { status: 'failed' } : { status: 'pending', retryInSeconds: retryIn },
    );
    const current = await findEndpoint(tx, companyId, id, { forUpdate: true });
    if (!current?.enabled) return;
    const since = current.failingSince ?? new Date();
    if (!current.failingSince) await updateEndpoint(tx, companyId, id, { failingSince: since });
    if (Date.now() - since.getTime() < DISABLE_AFTER_SECONDS * 1000) return;
    await updateEndpoint(tx, companyId, id, { enabled: false });
    await failPendingDeliveries(tx, companyId, id);
    await recordEvent(tx, companyId, 'webhook.disabled', {
      webhook_id: id,
      url: current.url,
      failing_since: since.toISOString(),
    });
    deps.log.warn(
      { companyId, webhookId: id, failingSince: since.toISOString() },
      'webhook endpoint disabled: its deliveries have all failed for 5 days',
    );
  });
}

/** Deliveries claimed at once: sent one after another, their successes recorded in one statement. */
const BATCH_SIZE = 50;

/**
 * How long a batch keeps starting sends. The endpoint (its secrets, whether it is enabled) is read again
 * before every batch, so a change reaches the sends within about this long; it also bounds the claim.
 */
const BATCH_WINDOW_MS = 1000;

/** Sends one delivery; the attempt as the log keeps it, and whether it was delivered. */
async function send(
  deps: DeliveryDeps,
  endpoint: SendingEndpoint,
  delivery: ClaimedDelivery,
): Promise<{ record: DeliveryAttempt; ok: boolean }> {
  const { options } = deps;
  const body = JSON.stringify(delivery.payload);
  const timestamp = Math.floor((deps.now?.() ?? Date.now()) / 1000);
  const at = new Date().toISOString();
  const result: SendResult = await sendWebhook(
    endpoint.url,
    webhookHeaders(secretsOf(endpoint), delivery.eventId, timestamp, body),
    body,
    { timeoutMs: options.timeoutMs, allowPrivate: options.allowPrivate, dnsServers: options.dnsServers },
  );
  const record: DeliveryAttempt = {
    at,
    status_code: result.statusCode,
    error: result.error,
    duration_ms: result.durationMs,
    excerpt: result.excerpt,
  };
  return { record, ok: result.error === null };
}

/** Records successful attempts; the first success after failures also ends the endpoint's failing state. */
async function recordSuccesses(
  deps: DeliveryDeps,
  endpoint: SendingEndpoint,
  delivered: { id: string; attempt: DeliveryAttempt }[],
): Promise<void> {
  if (delivered.length === 0) return;
  if (!endpoint.failingSince) {
    // The common case is one statement: no transaction round trips on the path every delivery takes.
    await recordDelivered(deps.db, endpoint.companyId, delivered);
    return;
  }
  await deps.db.transaction(async (tx) => {
    await recordDelivered(tx, endpoint.companyId, delivered);
    await updateEndpoint(tx, endpoint.companyId, endpoint.id, { failingSince: null });
  });
  endpoint.failingSince = null;
}

/**
 * Reads the endpoint and claims a batch of its due deliveries (one statement), and sends them in order for
 * up to the batch window (at least one); a failed attempt ends the batch, so the endpoint is read again
 * before the next send. What was not sent gets its due time back. 'more' when the endpoint may have more
 * due: a full batch, one cut short, or a failure. A short batch sent whole took every delivery due at its
 * claim, and each one committed after it queued this job to run again (rerunIfRunning), so no claim that
 * would find nothing is made.
 */
async function sendBatch(
  deps: DeliveryDeps,
  companyId: string,
  endpointId: string,
  deadline: number,
): Promise<'more' | 'done'> {
  const { db, options } = deps;
  // A dead sender's claim ends after this; until then nobody else sends the deliveries.
  const leaseSeconds = Math.ceil((BATCH_WINDOW_MS + options.timeoutMs) / 1000) + LEASE_MARGIN_SECONDS;
  const claim = await claimDueDeliveries(db, companyId, endpointId, leaseSeconds, BATCH_SIZE);
  if (!claim) return 'done';
  const { endpoint, deliveries: claimed } = claim;
  if (!endpoint.enabled) {
    await failPendingDeliveries(db, companyId, endpointId);
    return 'done';
  }
  if (claimed.length === 0) return 'done';
  const stopAt = Math.min(deadline, Date.now() + BATCH_WINDOW_MS);
  let delivered: { id: string; attempt: DeliveryAttempt }[] = [];
  let next = 0;
  let failed = false;
  try {
    while (next < claimed.length && (next === 0 || Date.now() < stopAt)) {
      const delivery = claimed[next++] as ClaimedDelivery;
      const { record, ok } = await send(deps, endpoint, delivery);
      if (ok) {
        delivered.push({ id: delivery.id, attempt: record });
        continue;
      }
      failed = true;
      // Successes first: the failing state must follow the attempts' order.
      await recordSuccesses(deps, endpoint, delivered);
      delivered = [];
      const round = delivery.roundAttempts + 1;
      await recordFailure(deps, endpoint, delivery.id, record, options.retrySchedule[round - 1]);
      break;
    }
  } finally {
    await recordSuccesses(deps, endpoint, delivered);
    await releaseDeliveries(db, companyId, claimed.slice(next));
  }
  return failed || next < claimed.length || claimed.length === BATCH_SIZE ? 'more' : 'done';
}

/** Sends the endpoint's due deliveries in batches, for up to the budget. */
export async function deliverEndpoint(
  deps: DeliveryDeps,
  companyId: string,
  endpointId: string,
): Promise<void> {
  const deadline = Date.now() + (deps.options.budgetMs ?? DELIVERY_BUDGET_MS);
  while (Date.now() < deadline) {
    if ((await sendBatch(deps, companyId, endpointId, deadline)) === 'done') return;
  }
}
