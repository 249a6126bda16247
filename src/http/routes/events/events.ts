/** GET /api/v1/events: the event log's pull side (decision 27). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { readEvents, requireCompanyWide } from '../../../domain/events/feed.ts';
import type { Services } from '../../../services.ts';
import { DECIMAL_INTEGER, decimalQuery } from '../../decimal-query.ts';
import { errorResponses } from '../../schemas/common.ts';
import { EventsPage, EventsQuery } from '../../schemas/events/events.ts';

/** The event feed route. */
export const eventRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get(
    '/api/v1/events',
    {
      config: { scope: 'events:read', requireAdmin: true },
      preValidation: decimalQuery({ limit: DECIMAL_INTEGER }),
      schema: {
        operationId: 'listEvents',
        tags: ['events'],
        summary: 'Read the event log after a cursor',
        description:
          "Every change a client can see, in log order (by the writing transaction's id: transactions that " +
          'overlap in time may commit in another order), after the cursor `after`. A reader that always ' +
          'passes the last `next_cursor` sees every event of its company exactly once and in order, even ' +
          'while many writers commit at once. Events are kept `EVENT_RETENTION_DAYS` (default 30); a cursor ' +
          'older than the oldest kept event is a 410. Needs a key of an admin with scope `events:read`.',
        'x-extension': true,
        querystring: EventsQuery,
        response: {
          200: EventsPage,
          ...errorResponses(410, 422),
        },
      },
    },
    async (request) => {
      requireCompanyWide(request.principal);
      const { after, limit = 100, type } = request.query;
      const types = type === undefined ? [] : Array.isArray(type) ? type : [type];
      return readEvents(services.database.db, request.principal, { after, limit, types });
    },
  );
};
