/** Schemas of the event log's pull side (decision 27). */
import { Type } from 'typebox';
import { EVENT_TYPES, type EventType } from '../../../domain/events/types.ts';

/** One event type. */
export const EventTypeSchema = Type.Unsafe<EventType>(
  Type.Union(
    EVENT_TYPES.map((t) => Type.Literal(t)),
    { description: 'An event type.' },
  ),
);

/** An event as the feed and webhooks show it. */
export const EventSchema = Type.Object(
  {
    id: Type.String({ description: 'The event id; the `webhook-id` of its deliveries.' }),
    type: Type.String({ description: 'One of the event types.' }),
    created_at: Type.String({ format: 'date-time' }),
    data: Type.Record(
      Type.String(),
      Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]),
      {
        description:
          'The ids (`call_id`, `conversation_id`, `agent_email`, `upload_id`, `handoff_id` as they apply) and the ' +
          'new state (`state` of a call, `status` and `reason` of an upload, `final` of a handoff record).',
      },
    ),
  },
  { $id: 'Event' },
);

const EXAMPLE_EVENT = {
  id: '5b0c2f4e-8f7a-4a51-9d43-2f0f3c1a9e11',
  type: 'call.stopped',
  created_at: '2026-01-01T12:00:03.120Z',
  data: {
    call_id: '0d6f1c3a-3b7e-4e0b-9f5e-6a2c1b9d8e77',
    conversation_id: 'call-2026-0001',
    agent_email: 'ann@acme.test',
    state: 'stopped',
  },
};

/** The query of GET /api/v1/events. */
export const EventsQuery = Type.Object(
  {
    after: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          'The `next_cursor` of the previous page; without it, the feed starts at the oldest kept event.',
      }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    type: Type.Optional(
      Type.Union([EventTypeSchema, Type.Array(EventTypeSchema, { maxItems: EVENT_TYPES.length * 4 })], {
        description: 'Only events of this type; repeat the parameter for several.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** A page of the feed. */
export const EventsPage = Type.Object(
  {
    events: Type.Array(EventSchema),
    next_cursor: Type.String({
      description:
        'Pass it as `after` to read on. Never null: on an empty page it is the position reached, to poll with again.',
    }),
  },
  {
    $id: 'EventsPage',
    examples: [{ events: [EXAMPLE_EVENT], next_cursor: 'ZTEuNzU0LjI' }],
  },
);
