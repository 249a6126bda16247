/**
 * The service's PostgreSQL advisory lock ids, in one place so that no two uses share one by accident (the
 * first-start bootstrap once shared the events trigger's, and an event written while a process
 * bootstrapped skipped its wake-up). Any fixed numbers; they only have to differ.
 */

/** Serialises migrations of several processes (session lock). */
export const MIGRATION_LOCK_ID = 7_416_302_551;

/**
 * Taken (try, transaction) by the events trigger so that one of the concurrent transactions writing events
 * notifies (migration 0017_events_notify_coalesced; SQL cannot import it, so it is written there too).
 */
export const EVENTS_NOTIFY_LOCK_ID = 7_416_302_552;

/** Stops two processes starting at once from both bootstrapping (transaction lock). */
export const BOOTSTRAP_LOCK_ID = 7_416_302_553;
