/** POST /api/v1/live/{conversation_id}/data/sale and /data/customer (spec 4.7–4.8, decision 13; deprecated). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { recordCustomer, recordSale } from '../../../domain/calls/live.ts';
import type { Services } from '../../../services.ts';
import { setDeprecationHeaders } from '../../deprecation.ts';
import {
  CustomerBody,
  LIVE_DESCRIPTION,
  LiveParams,
  LiveSuccess,
  SaleBody,
} from '../../schemas/calls/live.ts';
import { errorResponses } from '../../schemas/common.ts';
import { errorWithExamples, UNKNOWN_FIELD } from '../../schemas/examples.ts';

/** The deprecated live routes. */
export const liveRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { db } = services.database;
  const docsUrl = `${services.config.publicUrl}/api/v1/docs`;
  // onSend runs for every answer of the route, errors included (401s of the auth hook too).
  const deprecated = async (_request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    setDeprecationHeaders(reply, docsUrl);
    return payload;
  };
  const responses = (notFoundTarget: string) => ({
    200: LiveSuccess,
    ...errorResponses(413, 415),
    404: errorWithExamples('No call of the company has this conversation_id.', {
      conversation_not_found: [
        'No call has this conversation_id',
        `conversation "${notFoundTarget}" not found`,
      ],
    }),
    409: errorWithExamples('Calls of several agents have this conversation_id.', {
      ambiguous: [
        'Ambiguous conversation_id',
        'conversation_id "call-2026-0001" is ambiguous: more than one agent has a conversation with it; ' +
          'use call/add_tags with agent_email',
      ],
    }),
  });

  app.post(
    '/api/v1/live/:conversation_id/data/sale',
    {
      config: { scope: 'calls' },
      onSend: deprecated,
      schema: {
        tags: ['live'],
        operationId: 'setLiveSale',
        summary: 'Mark sale status (deprecated; use call/add_tags)',
        description: `${LIVE_DESCRIPTION}\n\nStores \`closed\` as the boolean tag \`sale_closed\`.`,
        deprecated: true,
        params: LiveParams,
        body: SaleBody,
        response: {
          ...responses('call-2026-0001'),
          422: errorWithExamples('No data, or a field is invalid. Nothing changed.', {
            no_data: ['{} or {"closed": null}', 'no data provided'],
            unknown_field: UNKNOWN_FIELD,
          }),
        },
      },
    },
    async (request) => {
      await recordSale(db, request.principal, request.params.conversation_id, request.body.closed);
      return { success: true };
    },
  );

  app.post(
    '/api/v1/live/:conversation_id/data/customer',
    {
      config: { scope: 'calls' },
      onSend: deprecated,
      schema: {
        tags: ['live'],
        operationId: 'addLiveCustomerData',
        summary: 'Add customer data (deprecated; use call/add_tags)',
        description: `${LIVE_DESCRIPTION}\n\nStores \`account_id\` as the string tag \`customer_account_id\`.`,
        deprecated: true,
        params: LiveParams,
        body: CustomerBody,
        response: {
          ...responses('call-2026-0001'),
          422: errorWithExamples('No data, or a field is invalid. Nothing changed.', {
            no_data: ['{} or {"account_id": null}', 'no data provided'],
            unknown_field: UNKNOWN_FIELD,
          }),
        },
      },
    },
    async (request) => {
      await recordCustomer(db, request.principal, request.params.conversation_id, request.body.account_id);
      return { success: true };
    },
  );
};
