/**
 * Examples in the named form OpenAPI media objects take, and the catalog of error examples several
 * endpoints share (each a case of its status, named and explained; a test checks every one is a real
 * answer of the API).
 */
import { type TSchema, Type } from 'typebox';

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
