/** GET /healthz (the process is up) and GET /readyz (the database answers; which audio decoder is in use). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { findDecoder } from '../../adapters/decode/ffmpeg.ts';
import { UnavailableError } from '../../domain/errors.ts';
import type { Services } from '../../services.ts';
import { errorResponses } from '../schemas/common.ts';

const Status = Type.Object({ status: Type.String() });
const Ready = Type.Object({
  status: Type.String(),
  decoder: Type.Union([Type.String(), Type.Null()], {
    description:
      'The ffmpeg that decodes recordings for the analysis: `bundled` (the npm package), `system` or `configured` (FFMPEG_PATH), with its version; null when none is found (recordings then fail analysis with a reason).',
    examples: ['bundled: ffmpeg version N-47683-g0e8eb07980-static'],
  }),
});

/** The health routes. */
export const healthRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get(
    '/healthz',
    {
      config: { public: true },
      schema: {
        operationId: 'getHealth',
        tags: ['service'],
        summary: 'The process is up',
        response: { 200: Status },
      },
    },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/readyz',
    {
      config: { public: true },
      schema: {
        tags: ['service'],
        operationId: 'getReadiness',
        summary: 'The database answers',
        response: { 200: Ready, ...errorResponses(503) },
      },
    },
    async () => {
      try {
        await services.database.ping();
      } catch {
        throw new UnavailableError('database unavailable');
      }
      const decoder = findDecoder(services.config.ffmpegPath);
      return {
        status: 'ready',
        decoder: decoder ? `${decoder.source}: ${decoder.version.split(' ').slice(0, 3).join(' ')}` : null,
      };
    },
  );
};
