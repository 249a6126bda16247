/**
 * Schemas shared by the call endpoints: the fields that identify a call, tags, and the error bodies with
 * named examples. Every object schema rejects unknown fields (decision 3).
 */
import { type TSchema, Type } from 'typebox';
import { TAG_TYPES } from '../../domain/tags.ts';

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
    'the stored value of that key).',
  examples: [{ queue: 'billing', ivr_path: ['1', '3'] }],
});

/** The success body (spec 2.9). */
export const Success = Type.Object(
  { success: Type.Boolean() },
  { additionalProperties: false, description: 'Done.', examples: [{ success: true }] },
);

/** A named example of a request or answer. */
export interface NamedExample {
  summary: string;
  value: unknown;
}

/** Named examples in the form OpenAPI media objects take (`x-examples` becomes the media's `examples`). */
export function namedExamples(examples: Record<string, NamedExample>): {
  'x-examples': Record<string, NamedExample>;
} {
  return { 'x-examples': examples };
}

/** An error response whose examples are each a case of that status, named and explained. */
export function errorWithExamples(
  description: string,
  examples: Record<string, [summary: string, error: string]>,
): TSchema {
  const named: Record<string, NamedExample> = {};
  for (const [name, [summary, error]] of Object.entries(examples))
    named[name] = { summary, value: { error } };
  return Type.Object({ error: Type.String() }, { description, ...namedExamples(named) });
}

/** The 409 of an agent email held by several active users (spec 2.10, decision 7); `state` adds a state conflict. */
export function agentConflict(state?: [summary: string, error: string]): TSchema {
  const named: Record<string, NamedExample> = {
    agent_conflict: {
      summary: 'More than one active user holds agent_email; nothing was recorded',
      value: {
        error: 'more than one active user has agent_email "Agent@Example.com"',
        agent_email: 'Agent@Example.com',
        conflicting_user_ids: [
          '0b5a6c7e-2f39-4a57-9d0f-1c2b3a4d5e6f',
          '7c1e9f20-8a4b-4d3c-b2a1-9e8d7c6b5a40',
        ],
      },
    },
  };
  const email = Type.String({ description: 'The agent_email as the request sent it.' });
  const ids = Type.Array(Type.String(), {
    description: 'Opaque ids of the active users that hold the email.',
  });
  if (!state) {
    return Type.Object(
      { error: Type.String(), agent_email: email, conflicting_user_ids: ids },
      {
        description: 'Several active users of the company hold agent_email; nothing was recorded.',
        ...namedExamples(named),
      },
    );
  }
  named.state_conflict = { summary: state[0], value: { error: state[1] } };
  return Type.Object(
    { error: Type.String(), agent_email: Type.Optional(email), conflicting_user_ids: Type.Optional(ids) },
    {
      description:
        'Several active users hold agent_email (the body then has `agent_email` and `conflicting_user_ids`), ' +
        'or the call’s state forbids the action (only `error`). Nothing was recorded.',
      ...namedExamples(named),
    },
  );
}

/** The 404s of an (agent, conversation_id) lookup. */
export const AGENT_NOT_FOUND: [string, string] = [
  'No active user of the company has agent_email',
  'agent_email "nobody@example.com" matches no active user',
];
/** The 404 of a pair without a call. */
export const CONVERSATION_NOT_FOUND: [string, string] = [
  'The agent has no call with this conversation_id',
  'conversation "call-2026-0001" of agent "agent@example.com" not found',
];
/** The 422 of a field the schema does not know. */
export const UNKNOWN_FIELD: [string, string] = [
  'A field the endpoint does not know (a typo)',
  'company_id: unknown field',
];
