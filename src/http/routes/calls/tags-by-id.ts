/** POST /api/v1/calls/{id}/tags: call/add_tags's tags on a call named by its id (an extension). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { addTagsToCall } from '../../../domain/calls/tags.ts';
import type { Services } from '../../../services.ts';
import { CallParams } from '../../schemas/calls/read.ts';
import { Success } from '../../schemas/calls/shared.ts';
import { CALL_TAGS_DESCRIPTION, CallTagsBody, TAG_ERROR_EXAMPLES } from '../../schemas/calls/tags.ts';
import { errorResponses } from '../../schemas/common.ts';
import { errorWithExamples } from '../../schemas/examples.ts';

/** The tags-by-id route. */
export const callTagsByIdRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (
  app,
  { services },
) => {
  const { db } = services.database;
  app.post(
    '/api/v1/calls/:id/tags',
    {
      config: { scope: 'calls' },
      schema: {
        operationId: 'addTagsToCall',
        'x-extension': true,
        tags: ['calls'],
        summary: 'Add typed tags to the call with this id',
        description: CALL_TAGS_DESCRIPTION,
        params: CallParams,
        body: CallTagsBody,
        response: {
          200: Success,
          ...errorResponses(404, 413, 415),
          422: errorWithExamples(
            'A field is invalid; the message names it. Nothing was recorded.',
            TAG_ERROR_EXAMPLES,
          ),
        },
      },
    },
    async (request) => {
      await addTagsToCall(db, request.principal, request.params.id, request.body.tags);
      return { success: true };
    },
  );
};
