/** GET /api/v1/calls/{id}/recording (decision 25): a redirect to, or the JSON of, a signed recording URL. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { recordingLink } from '../../../domain/calls/recording.ts';
import type { Services } from '../../../services.ts';
import { CallParams } from '../../schemas/calls/read.ts';
import { RecordingLinkResponse, RecordingQuery, RecordingRedirect } from '../../schemas/calls/recording.ts';
import { errorResponses } from '../../schemas/common.ts';

/** The recording route. */
export const callRecordingRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (
  app,
  { services },
) => {
  const deps = { db: services.database.db, storage: services.storage };
  const expiresIn = services.config.recordingUrlExpiresIn;

  app.get(
    '/api/v1/calls/:id/recording',
    {
      config: { scope: 'calls:read' },
      schema: {
        operationId: 'getCallRecording',
        'x-extension': true,
        tags: ['calls'],
        summary: 'Play or download the call’s recording: a redirect to a signed URL',
        description:
          'Answers 302 to a signed GET URL of the call’s latest `ready` upload, ' +
          'valid `RECORDING_URL_EXPIRES_IN` seconds (default 300); with `redirect=false`, 200 with the URL as ' +
          'JSON. The URL needs no API key (the signature is the credential), serves the upload’s exact ' +
          'Content-Type and single byte ranges (a browser’s `<audio>` can seek in it), and answers errors in ' +
          'S3’s XML: 403 `AccessDenied` once expired, 403 `SignatureDoesNotMatch` when altered, 404 ' +
          '`NoSuchKey` once the call is erased. A call the key may not see, or with no ready upload: 404.',
        params: CallParams,
        querystring: RecordingQuery,
        response: {
          200: RecordingLinkResponse,
          302: RecordingRedirect,
          ...errorResponses(404, 422),
        },
      },
    },
    async (request, reply) => {
      const link = await recordingLink(deps, request.principal, request.params.id, expiresIn);
      // The URL is a credential that expires: nothing on the way may keep it.
      reply.header('cache-control', 'no-store');
      if (request.query.redirect === 'false') return link;
      return reply.redirect(link.url, 302);
    },
  );
};
