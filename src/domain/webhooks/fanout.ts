/**
 * The webhook fan-out: follows the event log with the same never-skipping position as the pull feed, and
 * turns each new event into a delivery for every enabled endpoint of its company that wants its type, in
 * one transaction with the position's move, so an event is fanned out exactly once even across crashes.
 */
import type { Db } from '../../adapters/db/database.ts';
import { listEvents } from '../../adapters/db/repositories/events.ts';
import { listEndpointsWithDueDeliveries } from '../../adapters/db/repositories/webhook-deliveries.ts';
import {
  fanOutDeliveries,
  lockDispatchPosition,
  saveDispatchPosition,
  skipEventsWithoutEndpoints,
} from '../../adapters/db/repositories/webhook-fanout.ts';
import type { JobQueue } from '../../adapters/queue/queue.ts';
import { toEventView } from '../events/feed.ts';
import { enqueueEndpointDeliveries, WEBHOOK_DELIVER_JOB } from './delivery.ts';

const BATCH = 500;

/** What one fan-out run did. */
export interface FanOutRun {
  /** Events read (0 when no endpoint is enabled: the run moved past them unread). */
  read: number;
  /** Whether the run checked for an enabled endpoint and found one. */
  endpointsFound: boolean;
  /**
   * Set when the run read the log for endpoints: whether committed events remain that are not final yet,
   * because an older transaction (of any database of the cluster) is still running.
   */
  heldBack?: boolean;
}

/**
 * Fans out every final event not fanned out yet. Unless the caller knows an endpoint to be enabled
 * (`endpointsKnown`, found by a recent run), it checks first: with none, one statement moves past the
 * events (`skipEventsWithoutEndpoints`) and the run ends.
 */
export async function fanOutEvents(db: Db, queue: JobQueue, endpointsKnown = false): Promise<FanOutRun> {
  // Most runs of a service without webhooks: one statement, and no event read, parsed and sent back.
  if (!endpointsKnown && !(await skipEventsWithoutEndpoints(db))) return { read: 0, endpointsFound: false };
  let total = 0;
  for (;;) {
    const { read, delivering, held } = await db.transaction(async (tx) => {
      const position = await lockDispatchPosition(tx);
      const page = await listEvents(tx, null, position, { limit: BATCH, types: [], held: true });
      const last = page.events.at(-1);
      if (!last) return { read: 0, delivering: false, held: page.held };
      const endpoints = await fanOutDeliveries(
        tx,
        page.events.map((e) => ({ ...e, payload: toEventView(e) })),
      );
      for (const e of endpoints) await enqueueEndpointDeliveries(tx, queue, e.companyId, e.endpointId);
      await saveDispatchPosition(tx, { txid: last.txid, seq: last.seq });
      return { read: page.events.length, delivering: endpoints.length > 0, held: page.held };
    });
    total += read;
    // Workers are woken only when there is something to deliver: every call write is an event, and a
    // wake-up costs each worker a claim query.
    if (delivering) queue.notify([WEBHOOK_DELIVER_JOB]);
    if (read < BATCH) return { read: total, endpointsFound: !endpointsKnown, heldBack: held };
  }
}

/** Queues the job of every endpoint with a delivery due (retries, and any job lost to a race). */
export async function queueDueDeliveries(db: Db, queue: JobQueue): Promise<number> {
  let queued = 0;
  for (const e of await listEndpointsWithDueDeliveries(db, 1000)) {
    if (await enqueueEndpointDeliveries(db, queue, e.companyId, e.endpointId)) queued++;
  }
  if (queued > 0) queue.notify([WEBHOOK_DELIVER_JOB]);
  return queued;
}
