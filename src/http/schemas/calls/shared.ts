/**
 * Schemas shared by the call endpoints: the fields that identify a call, tags, metadata and the success
 * body. Every object schema rejects unknown fields (decision 3). Their error examples are in `../examples.ts`.
 */
import { Type } from 'typebox';
import { TAG_TYPES } from '../../../domain/calls/tags.ts';
import { MAX_METADATA_KEYS } from '../../../domain/limits.ts';
import { METADATA_LIMITS } from '../common.ts';

/** agent_email (spec 2.1): matched case-insensitively against active users of the caller's company. */
export const AgentEmail = Type.String({
  minLength: 1,
  maxLength: 320,
  description:
    'Email of the agent: an active user of the caller’s company, compared without regard to case. ' +
    'No such user: 404; several: 409 with `agent_email` and `conflicting_user_ids`.',
  examples: ['agent@example.com'],
});

/** conversation_id (decision 1): 1–255 characters, unique per agent. */
export const ConversationId = Type.String({
  minLength: 1,
  maxLength: 255,
  description:
    'The caller’s id of the call, 1–255 characters. Calls are unique by agent and conversation_id.',
  examples: ['call-2026-0001'],
});

/** A typed tag (spec 2.3, decision 5). */
export const Tag = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 128, description: 'Tag name, 1–128 characters.' }),
    type: Type.Enum(TAG_TYPES, {
      description: 'One of string, integer, boolean; anything else (float…) is a 422.',
    }),
    value: Type.Union([Type.String(), Type.Number(), Type.Boolean()], {
      description:
        'Must agree with type: a string of at most 4,096 characters; a JSON integer within ±(2^53−1); ' +
        'true or false.',
    }),
  },
  { additionalProperties: false, examples: [{ key: 'csat', type: 'integer', value: 5 }] },
);

/** The most tags one request may carry (call/create and call/add_tags); more is a 422. */
export const MAX_TAGS_PER_REQUEST = 100;

/** Tags of one request: a key at most once, at most MAX_TAGS_PER_REQUEST. */
export const Tags = Type.Array(Tag, {
  maxItems: MAX_TAGS_PER_REQUEST,
  description:
    'Typed tags, one value per key: a later request replaces the value and type of a key. ' +
    `The same key twice in one request is a 422; at most ${MAX_TAGS_PER_REQUEST} tags per request (more: 422).`,
});

/** Metadata of start and stop: any JSON object, merged into the call's metadata by top-level key. */
export const Metadata = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'Any JSON object; its top-level keys are merged into the call’s metadata (a key sent replaces ' +
    `the stored value of that key). ${METADATA_LIMITS}`,
  maxProperties: MAX_METADATA_KEYS,
  examples: [{ queue: 'billing', ivr_path: ['1', '3'] }],
});

/** The success body (spec 2.9). */
export const Success = Type.Object(
  { success: Type.Boolean() },
  { additionalProperties: false, description: 'Done.', examples: [{ success: true }] },
);
