/** The event types of decision 27 and the shape of an event as clients see it. */

/** Every type the event log and webhooks carry, in the order decision 27 lists them. */
export const EVENT_TYPES = [
  'call.created',
  'call.updated',
  'call.started',
  'call.stopped',
  'call.deleted',
  'upload.ready',
  'upload.rejected',
  'upload.expired',
  'handoff.created',
  'handoff.updated',
  'handoff.finalized',
  'analysis.ready',
  'transcript.ready',
  'webhook.disabled',
] as const;

/** One of EVENT_TYPES. */
export type EventType = (typeof EVENT_TYPES)[number];

/** The type of the test delivery a webhook endpoint can ask for; never written to the log. */
export const WEBHOOK_TEST_TYPE = 'webhook.test';

/** What an event says: ids and the new state, never whole transcripts (decision 27). */
export type EventData = Record<string, string | number | boolean | null>;

/** An event as the API and webhooks show it. */
export interface EventView {
  id: string;
  type: string;
  created_at: string;
  data: EventData;
}
