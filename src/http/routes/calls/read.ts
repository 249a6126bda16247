/** Reading and erasing calls (decisions 22–26): extensions beyond the spec, scopes `calls:read`/`calls:delete`. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { eraseCall } from '../../../domain/calls/erase.ts';
import { getVisibleCall, listVisibleCalls } from '../../../domain/calls/read.ts';
import type { Services } from '../../../services.ts';
import { DECIMAL_INTEGER, DECIMAL_NUMBER, decimalQuery } from '../../decimal-query.ts';
import { sendWithJsonText } from '../../json-text-body.ts';
import {
  CallDetailResponse,
  CallPageResponse,
  CallParams,
  ErasedResponse,
  ListQuerySchema,
} from '../../schemas/calls/read.ts';
import { errorResponses } from '../../schemas/common.ts';

const TAGS = ['calls'];

const numbersAreDecimal = decimalQuery({
  limit: DECIMAL_INTEGER,
  product_id: DECIMAL_INTEGER,
  start_time_gte: DECIMAL_NUMBER,
  start_time_lt: DECIMAL_NUMBER,
});

/** GET /api/v1/calls, GET /api/v1/calls/{id} and DELETE /api/v1/calls/{id}. */
export const callReadRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (
  app,
  { services },
) => {
  const db = services.database.db;
  const erasure = {
    db,
    queue: services.queue,
    storage: services.storage,
    handoffCache: services.handoffCache,
    lateUploadGraceSeconds: services.config.uploads.expiryGraceSeconds,
  };

  app.get(
    '/api/v1/calls',
    {
      config: { scope: 'calls:read' },
      preValidation: numbersAreDecimal,
      schema: {
        operationId: 'listCalls',
        'x-extension': true,
        tags: TAGS,
        summary: 'List calls, newest first, filtered, by cursor',
        description:
          'Extension. An admin’s key sees every call of its company; an agent’s key only the ' +
          'calls where its user is the agent. Pages follow `next_cursor` (keyset pagination: a page deep in ' +
          'the list costs what the first does). An unknown parameter or a malformed value: 422 naming it.',
        querystring: ListQuerySchema,
        response: { 200: CallPageResponse, ...errorResponses(422) },
      },
    },
    async (request) => listVisibleCalls(db, request.principal, request.query),
  );

  app.get(
    '/api/v1/calls/:id',
    {
      config: { scope: 'calls:read' },
      schema: {
        operationId: 'getCall',
        'x-extension': true,
        tags: TAGS,
        summary: 'Read one call: transcript, tags, metadata, uploads, linked records',
        description:
          'Extension. A call the key may not see (another company’s, or as an agent another ' +
          'agent’s) is a 404, like one that does not exist.',
        params: CallParams,
        response: { 200: CallDetailResponse, ...errorResponses(404) },
      },
    },
    async (request, reply) =>
      sendWithJsonText(reply, await getVisibleCall(db, request.principal, request.params.id), [
        'transcript',
        'metadata',
        'analysis',
      ]),
  );

  app.delete(
    '/api/v1/calls/:id',
    {
      config: { scope: 'calls:delete', requireAdmin: true },
      schema: {
        operationId: 'deleteCall',
        'x-extension': true,
        tags: TAGS,
        summary: 'Erase a call and everything stored about it (admins)',
        description:
          'Extension. Needs the `calls:delete` scope and a key whose user is an admin (403 ' +
          'otherwise). Erases the transcript, tags, metadata, uploads and their stored objects, analyses and ' +
          'the linked call-handoff records, final ones included. Answers 204; afterwards the call is a 404 ' +
          'everywhere (a second DELETE included). A crash half way never leaves a readable call or an ' +
          'orphaned object: the rows go and the objects’ deletion is queued in one transaction.',
        params: CallParams,
        response: { 204: ErasedResponse, ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      await eraseCall(erasure, request.principal, request.params.id);
      return reply.code(204).send(null);
    },
  );
};
