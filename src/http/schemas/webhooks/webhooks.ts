/** Schemas of webhook endpoint management (decision 27). */
import { Type } from 'typebox';
import { EventTypeSchema } from '../events/events.ts';

const Types = Type.Union([Type.Array(EventTypeSchema, { minItems: 1, uniqueItems: true }), Type.Null()], {
  description: 'The event types sent to the endpoint; null (or absent on create) = every type.',
});
const Url = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    'Where events are POSTed. Must be `https` and resolve to a public address (checked here and again on ' +
    'every connection), unless the service runs with `WEBHOOK_ALLOW_PRIVATE=true`; other schemes: 422.',
});
const Description = Type.Union([Type.String({ maxLength: 500 }), Type.Null()]);

/** The body of POST /api/v1/webhooks. */
export const CreateWebhookBody = Type.Object(
  { url: Url, types: Type.Optional(Types), description: Type.Optional(Description) },
  { additionalProperties: false },
);

/** The body of PATCH /api/v1/webhooks/{id}. */
export const PatchWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    types: Type.Optional(Types),
    description: Type.Optional(Description),
    enabled: Type.Optional(
      Type.Boolean({
        description: 'A disabled endpoint gets nothing; events of that time are not sent later.',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

/** The path of one endpoint. */
export const WebhookParams = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The endpoint id.' }),
});

/** The path of one delivery. */
export const DeliveryParams = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The endpoint id.' }),
  delivery_id: Type.String({ format: 'uuid', description: 'The delivery id.' }),
});

const EXAMPLE = {
  id: '9a4e7f0c-51d2-4c8e-a1f3-2b6d8e0c4a19',
  url: 'https://hooks.acme.test/cqs',
  types: ['call.stopped', 'upload.ready'],
  description: 'QA pipeline',
  enabled: true,
  created_at: '2026-01-01T12:00:00.000Z',
};

/** An endpoint. */
export const WebhookEndpoint = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    types: Types,
    description: Description,
    enabled: Type.Boolean(),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'WebhookEndpoint', examples: [EXAMPLE] },
);

/** An endpoint with its secret: the answer of create. */
export const CreatedWebhookEndpoint = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    types: Types,
    description: Description,
    enabled: Type.Boolean(),
    created_at: Type.String({ format: 'date-time' }),
    secret: Type.String({
      description:
        '`whsec_` + base64 of 32 random bytes: the signing secret, shown only here and on rotation.',
    }),
  },
  {
    $id: 'CreatedWebhookEndpoint',
    examples: [{ ...EXAMPLE, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo=' }],
  },
);

/** The list of endpoints. */
export const WebhookList = Type.Object(
  { webhooks: Type.Array(WebhookEndpoint) },
  { $id: 'WebhookList', examples: [{ webhooks: [EXAMPLE] }] },
);

/** The answer of rotate-secret. */
export const RotatedSecret = Type.Object(
  {
    secret: Type.String({
      description:
        'The new secret. For 24 hours deliveries carry signatures with both the old and the new one.',
    }),
  },
  { examples: [{ secret: 'whsec_Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=' }] },
);

/** The answer of test: the id of the `webhook.test` message (its `webhook-id`). */
export const TestAccepted = Type.Object(
  { event_id: Type.String() },
  { examples: [{ event_id: '1f0f6a52-0f7e-4f39-9a55-38f0d2a0c1b7' }] },
);

/** The answer of redeliver. */
export const Accepted = Type.Object({ accepted: Type.Boolean() }, { examples: [{ accepted: true }] });

const Attempt = Type.Object({
  at: Type.String({ format: 'date-time' }),
  status_code: Type.Union([Type.Integer(), Type.Null()], { description: 'null when no answer came.' }),
  error: Type.Union([Type.String(), Type.Null()], {
    description: 'Why the attempt failed; null on success.',
  }),
  duration_ms: Type.Integer(),
  response: Type.Union([Type.String(), Type.Null()], {
    description: 'The first 500 characters of the response body; nothing more of it is kept.',
  }),
});

/** The delivery log of an endpoint. */
export const DeliveryList = Type.Object(
  {
    deliveries: Type.Array(
      Type.Object({
        id: Type.String(),
        event_id: Type.String({ description: 'The `webhook-id` header of every attempt.' }),
        event_type: Type.String(),
        status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
        attempts: Type.Array(Attempt),
        next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      }),
    ),
  },
  {
    $id: 'WebhookDeliveryList',
    examples: [
      {
        deliveries: [
          {
            id: '3c1d1b8e-6f0a-4b7e-9d55-0f2a7c9e1d44',
            event_id: '5b0c2f4e-8f7a-4a51-9d43-2f0f3c1a9e11',
            event_type: 'call.stopped',
            status: 'pending',
            attempts: [
              {
                at: '2026-01-01T12:00:03.200Z',
                status_code: 503,
                error: 'answered 503',
                duration_ms: 41,
                response: 'Service Unavailable',
              },
            ],
            next_attempt_at: '2026-01-01T12:00:08.241Z',
          },
        ],
      },
    ],
  },
);
