/** GET /healthz (the process is up) and GET /readyz (the database answers). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { UnavailableError } from '../../domain/errors.ts';
import type { Services } from '../../services.ts';
import { errorResponses } from '../schemas/common.ts';

const Status = Type.Object({ status: Type.String() });

/** The health routes. */
export const healthRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get(
    '/healthz',
    { schema: { tags: ['service'], summary: 'The process is up', response: { 200: Status } } },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['service'],
        summary: 'The database answers',
        response: { 200: Status, ...errorResponses(503) },
      },
    },
    async () => {
      try {
        await services.database.ping();
      } catch {
        throw new UnavailableError('database unavailable');
      }
      return { status: 'ready' };
    },
  );
};
