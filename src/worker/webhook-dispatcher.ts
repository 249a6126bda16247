/**
 * The webhook fan-out loop of a worker process: woken by commits that write events (the events
 * trigger's NOTIFY, heard by every process; of concurrent commits one notifies, see migration 0017), and polling as a safety net for lost notifications and for
 * retries coming due. Runs woken by events start at most every `FANOUT_COALESCE_MS`, so that under load
 * one run (a transaction of several statements) covers the events of many writes instead of one run per
 * write, while a wake-up after a quiet spell runs at once; wake-ups that arrive meanwhile, or during a
 * run, join the next run. Due retries are queued by the poll.
 */

import { fanOutEvents, queueDueDeliveries } from '../domain/webhooks/fanout.ts';
import type { Services } from '../services.ts';
import type { WorkerLog } from './worker.ts';

/** The notifier key the events trigger sends (see migration 0009_events_wakeup). */
export const EVENTS_NOTIFY_KEY = '*events';

/** The least milliseconds between the starts of two runs woken by events: the wake-ups between join one. */
export const FANOUT_COALESCE_MS = 20;

/**
 * How long a run that found an endpoint enabled spares the next ones the check for one (a statement per
 * run, up to 50 a second): the full run is right with or without endpoints, only dearer without.
 */
export const ENDPOINTS_KNOWN_MS = 1000;

/** How long after a wake-up the loop keeps running, for commits that wrote events without notifying. */
export const FANOUT_TAIL_MS = 250;

/**
 * The first wait before a run looks again at events held back by an older transaction; it doubles while
 * they stay held, up to `HELD_RETRY_MAX_MS` (or the poll interval, when shorter).
 */
export const HELD_RETRY_MS = 50;

/** The longest wait between two looks at held-back events: one run a second costs little however long. */
export const HELD_RETRY_MAX_MS = 1000;

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

  // When a run last checked for an enabled endpoint and found one: for ENDPOINTS_KNOWN_MS after, runs skip
  // the check (so with endpoints, one check a second).
  let endpointsSeenAt = Number.NEGATIVE_INFINITY;
  const runOnce = async (due: boolean) => {
    try {
      const known = Date.now() - endpointsSeenAt < ENDPOINTS_KNOWN_MS;
      const fanned = await fanOutEvents(database.db, queue, known);
      if (fanned.endpointsFound) endpointsSeenAt = Date.now();
      if (!stopped) lookAgainIfHeld(fanned.heldBack === true);
      // A commit that wrote events beside the one that notified sent no wake-up of its own (migration
      // 0017), and events are read only once every older transaction has ended: for FANOUT_TAIL_MS after
      // a wake-up the loop keeps running (throttled as wake-ups are), so those follow within milliseconds
      // instead of at the next poll.
      if (!stopped && Date.now() - lastWake < FANOUT_TAIL_MS) runSoon();
      if (due) await queueDueDeliveries(database.db, queue);
    } catch (error) {
      log.warn({ err: error }, 'webhook fan-out failed; retrying at the next wake-up');
    }
  };
  // Events committed while an older transaction runs (a long report or a backup, in any database of the
  // cluster) become final when it ends, and that sends no wake-up: the loop looks again, sooner at first,
  // so they follow soon after it ends instead of at the next poll, without running flat out meanwhile.
  let heldTimer: NodeJS.Timeout | undefined;
  let heldDelay = 0;
  const lookAgainIfHeld = (held: boolean) => {
    if (!held) {
      heldDelay = 0;
      return;
    }
    if (heldTimer) return;
    heldDelay =
      heldDelay === 0
        ? HELD_RETRY_MS
        : Math.min(heldDelay * 2, HELD_RETRY_MAX_MS, config.webhooks.pollIntervalMs);
    heldTimer = setTimeout(() => {
      heldTimer = undefined;
      void run(false);
    }, heldDelay);
  };
  let dueToo = false;
  const run = (due: boolean): Promise<void> => {
    if (stopped) return running;
    dueToo ||= due;
    // At most one run waiting behind the current one: later wake-ups join it.
    queued ??= running.then(() => {
      queued = undefined;
      const withDue = dueToo;
      dueToo = false;
      return runOnce(withDue);
    });
    running = queued;
    return queued;
  };
  const runNow = () => run(true);
  let soon: NodeJS.Timeout | undefined;
  // When the last run began: a wake-up runs at once when that was FANOUT_COALESCE_MS ago or more, and
  // otherwise when it will be, so an idle service adds no wait and a busy one runs at most that often.
  let lastStart = 0;
  let lastWake = 0;
  const runSoon = () => {
    soon ??= setTimeout(
      () => {
        soon = undefined;
        lastStart = Date.now();
        void run(false);
      },
      Math.max(0, lastStart + FANOUT_COALESCE_MS - Date.now()),
    );
  };

  let unsubscribe: (() => void) | undefined;
  const woken = () => {
    lastWake = Date.now();
    runSoon();
  };
  notifier.subscribe(EVENTS_NOTIFY_KEY, woken).then(
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
      if (soon) clearTimeout(soon);
      if (heldTimer) clearTimeout(heldTimer);
      unsubscribe?.();
      await running;
    },
  };
}
