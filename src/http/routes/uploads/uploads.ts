/**
 * GET /api/v1/upload/{upload_id}: an upload's status and what verification found (issue 4);
 * POST /api/v1/upload/{upload_id}/complete: the client says its PUT is done (an extension).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ValidationError } from '../../../domain/errors.ts';
import { completeUpload, getUpload } from '../../../domain/uploads/uploads.ts';
import type { Services } from '../../../services.ts';
import { errorResponses } from '../../schemas/common.ts';
import { UploadParams, UploadResponse } from '../../schemas/uploads/uploads.ts';

/** The validator converts path text to numbers leniently ("1.5" would become upload 1): digits only. */
async function digitsOnly(request: { params: unknown }): Promise<void> {
  const raw: unknown = (request.params as { upload_id?: unknown }).upload_id;
  if (typeof raw === 'string' && !/^[0-9]+$/.test(raw)) {
    throw new ValidationError('must be integer', 'params.upload_id');
  }
}

/** The upload routes. */
export const uploadRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get(
    '/api/v1/upload/:upload_id',
    {
      config: { scope: 'calls' },
      preValidation: digitsOnly,
      schema: {
        tags: ['uploads'],
        operationId: 'getUpload',
        summary: 'Show an upload and what its verification found',
        description:
          'After `call/create` returns an upload body, the client PUTs the raw bytes to `upload_url` with ' +
          '`Content-Type: upload_content_type`. The service then verifies them in the background: the ' +
          'container is read from the bytes and the streams probed. An upload is rejected when it is not ' +
          'media, when a declared video type is not that container, when an audio upload has no audio, when ' +
          'it is 250,000,000 bytes or more, or when the call separates speakers by `channels` but the audio ' +
          'has fewer than two. `media` is null until verified (and for a file that is not media).',
        params: UploadParams,
        response: {
          200: UploadResponse,
          ...errorResponses(404, 422),
        },
      },
    },
    async (request) => getUpload(services.database.db, request.principal, request.params.upload_id),
  );

  app.post(
    '/api/v1/upload/:upload_id/complete',
    {
      config: { scope: 'calls' },
      preValidation: digitsOnly,
      schema: {
        tags: ['uploads'],
        operationId: 'completeUpload',
        'x-extension': true,
        summary: 'Say the PUT to upload_url is done, so verification starts at once',
        description:
          'Extension. Call it (no body) after the PUT to `upload_url` answered 200. The service looks the ' +
          'object up in storage and, when it is there, marks the upload `uploaded` and starts verifying it ' +
          'at once, instead of when its periodic sweep (every `UPLOAD_SWEEP_INTERVAL` seconds, default 15) ' +
          'finds the object; on S3 storage that makes a small upload `ready` within about a second. Calling ' +
          'it is optional (the sweep stays) and repeatable: an upload past `pending` is answered as it is. ' +
          'Answers the upload as GET does; poll that until `ready`, `rejected` or `expired`. 409 when ' +
          'nothing has arrived at `upload_url` yet, or the URL expired with nothing uploaded.',
        params: UploadParams,
        response: {
          200: UploadResponse,
          ...errorResponses(404, 409, 422),
        },
      },
    },
    async (request) =>
      completeUpload(
        { db: services.database.db, queue: services.queue, storage: services.storage },
        request.principal,
        request.params.upload_id,
      ),
  );
};
