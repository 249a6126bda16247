/** POST /api/v1/call/start and /call/stop (spec 4.3–4.4, decision 12; beta). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { startCall, stopCall } from '../../../domain/calls/start-stop.ts';
import type { Services } from '../../../services.ts';
import { Success } from '../../schemas/calls/shared.ts';
import {
  START_DESCRIPTION,
  STOP_DESCRIPTION,
  StartCallBody,
  StopCallBody,
} from '../../schemas/calls/start-stop.ts';
import { errorResponses } from '../../schemas/common.ts';
import {
  AGENT_NOT_FOUND,
  agentConflict,
  CONVERSATION_NOT_FOUND,
  errorWithExamples,
  UNKNOWN_FIELD,
} from '../../schemas/examples.ts';

/** The call/start and call/stop routes. */
export const callStateRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (
  app,
  { services },
) => {
  const { db } = services.database;

  app.post(
    '/api/v1/call/start',
    {
      config: { scope: 'calls' },
      schema: {
        tags: ['calls'],
        operationId: 'startCall',
        summary: 'Start a call (beta)',
        description: START_DESCRIPTION,
        body: StartCallBody,
        response: {
          200: Success,
          ...errorResponses(413, 415),
          404: errorWithExamples('No such agent, or product_id is not a product the caller sees.', {
            agent_not_found: AGENT_NOT_FOUND,
            product_not_found: ['The caller may not see product_id', 'product 999 not found'],
          }),
          409: agentConflict([
            'The call is stopped',
            'conversation "call-2026-0001" is stopped; a stopped call cannot start again',
          ]),
          422: errorWithExamples('A field is invalid; the message names it. Nothing was recorded.', {
            unknown_field: UNKNOWN_FIELD,
            archived_product: ['An archived product', 'product_id: product 7 is archived'],
            metadata_not_object: ['metadata that is not an object', 'metadata: must be object'],
          }),
        },
      },
    },
    async (request) => {
      await startCall(db, request.principal, request.body);
      return { success: true };
    },
  );

  app.post(
    '/api/v1/call/stop',
    {
      config: { scope: 'calls' },
      schema: {
        tags: ['calls'],
        operationId: 'stopCall',
        summary: 'Stop a call (beta)',
        description: STOP_DESCRIPTION,
        body: StopCallBody,
        response: {
          200: Success,
          ...errorResponses(413, 415),
          404: errorWithExamples('No such agent, or the agent has no such call.', {
            agent_not_found: AGENT_NOT_FOUND,
            conversation_not_found: CONVERSATION_NOT_FOUND,
          }),
          409: agentConflict(),
          422: errorWithExamples('A field is invalid; the message names it. Nothing was recorded.', {
            unknown_field: UNKNOWN_FIELD,
            missing_field: ['A required field is missing', 'conversation_id: is required'],
          }),
        },
      },
    },
    async (request) => {
      await stopCall(db, request.principal, request.body);
      return { success: true };
    },
  );
};
