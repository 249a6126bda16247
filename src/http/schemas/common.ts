/** Schemas shared by many routes: the error bodies of decisions 7–8 and the success body. */
import { type TSchema, Type } from 'typebox';

/** ErrorResponse (spec 2.8). */
export const ErrorResponse = Type.Object(
  { error: Type.String({ description: 'What went wrong, for a person to read.' }) },
  { $id: 'ErrorResponse', description: 'Every non-2xx answer of the API carries at least `error`.' },
);

/** The 409 body when more than one active user holds the agent email (spec 2.10, decision 7). */
export const AgentConflictResponse = Type.Object(
  {
    error: Type.String(),
    agent_email: Type.String({ description: 'The agent_email as the request sent it.' }),
    conflicting_user_ids: Type.Array(Type.String(), {
      description: 'Opaque ids of the active users that hold the email.',
    }),
  },
  { $id: 'AgentConflictResponse' },
);

/** The success body (spec 2.9). */
export const SuccessResponse = Type.Object({ success: Type.Boolean() }, { $id: 'SuccessResponse' });

const ERROR_TEXT: Record<number, string> = {
  400: 'The body is not valid JSON or not an object, or the API key was sent both ways.',
  401: 'API key missing, malformed, unknown or revoked, or its user is inactive.',
  403: 'The API key lacks the scope this endpoint needs.',
  404: 'Not found (another company’s objects are not found either).',
  409: 'Conflict with the current state.',
  413: 'Request body too large.',
  415: 'Content-Type is not application/json.',
  422: 'A field is invalid; the message names it.',
  429: 'Rate limited; retry after `Retry-After` seconds.',
  503: 'Database or storage unavailable; retry after `Retry-After` seconds.',
};

const ERROR_EXAMPLE: Record<number, string> = {
  400: 'request body is not valid JSON',
  401: 'invalid API key',
  403: 'API key lacks the "calls" scope',
  404: 'not found',
  409: 'conflict',
  413: 'request body is too large',
  415: 'unsupported Content-Type; send application/json',
  422: 'tags[0].type: must be one of "string", "integer", "boolean"',
  429: 'rate limit exceeded; retry in 12 seconds',
  503: 'service temporarily unavailable; retry later',
};

/** Error responses for the given statuses, each an ErrorResponse with a description and an example. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of statuses) {
    out[status] = Type.Object(
      { error: Type.String() },
      { description: ERROR_TEXT[status] ?? 'Error', examples: [{ error: ERROR_EXAMPLE[status] ?? 'error' }] },
    );
  }
  return out;
}

/** The errors any authenticated JSON endpoint can answer with. */
export const AUTHENTICATED_ERRORS = [400, 401, 403, 429, 503] as const;

/** The security requirement of an authenticated route: the Bearer header, or the deprecated query key. */
export const SECURITY: { [scheme: string]: string[] }[] = [{ bearerAuth: [] }, { apiKeyQuery: [] }];
