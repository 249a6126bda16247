/** POST /api/v1/calls/{id}/transcribe (decision 29): queue the transcription of the call's recording again. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requestTranscription } from '../../../domain/transcription/transcription.ts';
import type { Services } from '../../../services.ts';
import { CallParams } from '../../schemas/calls/read.ts';
import { errorResponses } from '../../schemas/common.ts';

const TranscriptionQueued = Type.Object(
  {
    status: Type.Literal('pending', { description: 'The call’s `transcription.status` from now on.' }),
    upload_id: Type.Integer({ description: 'The upload that will be transcribed: the latest ready one.' }),
  },
  { additionalProperties: false, examples: [{ status: 'pending', upload_id: 42 }] },
);

/** The transcription route. */
export const callTranscribeRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (
  app,
  { services },
) => {
  const deps = {
    db: services.database.db,
    queue: services.queue,
    engineConfigured: services.config.transcriber.engine !== 'none',
  };
  app.post(
    '/api/v1/calls/:id/transcribe',
    {
      config: { scope: 'calls' },
      schema: {
        operationId: 'transcribeCall',
        'x-extension': true,
        tags: ['calls'],
        summary: 'Transcribe the call’s recording again with the configured engine',
        description:
          'Queues a transcription of the call’s latest ready recording (202); its progress is the call’s ' +
          '`transcription` and its end a `transcript.ready` event. The result becomes the call’s transcript ' +
          'with `transcript_source: "transcription"`. 409 when no engine is configured (TRANSCRIBER=none), ' +
          'when the client sent the call’s transcript (it always wins and is never overwritten), or when the ' +
          'call has no ready recording. A call the key may not see: 404.',
        params: CallParams,
        response: { 202: TranscriptionQueued, ...errorResponses(404, 409) },
      },
    },
    async (request, reply) => {
      const queued = await requestTranscription(deps, request.principal, request.params.id);
      return reply.code(202).send(queued);
    },
  );
};
