/**
 * The webhook fan-out loop of a worker process: woken by every commit that writes events (the events
 * trigger's NOTIFY, heard by every process), and polling as a safety net for lost notifications and for
 * retries coming due. Wake-ups that arrive during a run coalesce into one more run.
 */

import { fanOutEvents, queueDueDeliveries } from '../domain/webhooks/fanout.ts';
import type { Services } from '../services.ts';
import type { WorkerLog } from './worker.ts';

/** The notifier key the events trigger sends (see migration 0009_events_wakeup). */
export const EVENTS_NOTIFY_KEY = '*events';

/** A running fan-out loop. */
export interface WebhookDispatcher {
  /** Runs once now (after a run in progress); resolves when done. */
  runNow(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the loop. */
export function startWebhookDispatcher(services: Services, log: WorkerLog): WebhookDispatcher {
  const { database, queue, notifier, config } = services;
  let running: Promise<void> = Promise.resolve();
  let queued: Promise<void> | undefined;
  let stopped = false;

  const runOnce = async () => {
    try {
      await fanOutEvents(database.db, queue);
      await queueDueDeliveries(database.db, queue);
    } catch (error) {
      log.warn({ err: error }, 'webhook fan-out failed; retrying at the next wake-up');
    }
  };
  const runNow = (): Promise<void> => {
    if (stopped) return running;
    // At most one run waiting behind the current one: later wake-ups join it.
    queued ??= running.then(() => {
      queued = undefined;
      return runOnce();
    });
    running = queued;
    return queued;
  };

  let unsubscribe: (() => void) | undefined;
  notifier
    .subscribe(EVENTS_NOTIFY_KEY, () => void runNow())
    .then(
      (off) => {
        if (stopped) off();
        else unsubscribe = off;
      },
      (error: unknown) => log.warn({ err: error }, 'could not listen for events; polling only'),
    );
  const timer = setInterval(() => void runNow(), config.webhooks.pollIntervalMs);
  void runNow();

  return {
    runNow,
    async stop() {
      stopped = true;
      clearInterval(timer);
      unsubscribe?.();
      await running;
    },
  };
}
