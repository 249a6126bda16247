/** GET /api/v1/upload/{upload_id}: an upload's status and what verification found (issue 4). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ValidationError } from '../../domain/errors.ts';
import { getUpload } from '../../domain/uploads.ts';
import type { Services } from '../../services.ts';
import { AUTHENTICATED_ERRORS, errorResponses, SECURITY } from '../schemas/common.ts';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

const Media = Type.Object(
  {
    container: Nullable(
      Type.String({
        description:
          'Container read from the bytes: mp4, mov, 3gp, webm, mkv, flv, mpeg, mpeg-ts, asf (wmv), avi, wav, mp3, ogg, flac, aac, amr, …',
      }),
    ),
    format: Nullable(
      Type.String({ description: 'The format as MediaInfo names it (MPEG-4, WebM, Wave, …).' }),
    ),
    duration_seconds: Nullable(Type.Number()),
    has_audio: Type.Boolean(),
    has_video: Type.Boolean(),
    audio_streams: Type.Integer(),
    video_streams: Type.Integer(),
    audio_channels: Nullable(Type.Integer({ description: 'Channels of the first audio stream.' })),
    audio_codec: Nullable(
      Type.String({ description: 'As MediaInfo names it: AAC, PCM, MPEG Audio, Opus, …' }),
    ),
    audio_sample_rate: Nullable(Type.Number()),
    video_codec: Nullable(Type.String({ description: 'As MediaInfo names it: AVC, VP8, MPEG-4 Visual, …' })),
    video_width: Nullable(Type.Integer()),
    video_height: Nullable(Type.Integer()),
  },
  { $id: 'UploadMedia', description: 'What verification found in the bytes.' },
);

const UploadStatus = Type.Union(
  [
    Type.Literal('pending'),
    Type.Literal('uploaded'),
    Type.Literal('ready'),
    Type.Literal('rejected'),
    Type.Literal('expired'),
  ],
  {
    description:
      '`pending`: the URL was issued, nothing arrived yet. `uploaded`: the bytes arrived, verification is ' +
      'queued. `ready`: verified media. `rejected`: see `reason`. `expired`: the URL expired with nothing uploaded.',
  },
);

const UploadResponse = Type.Object(
  {
    upload_id: Type.Integer(),
    conversation_id: Type.String({ description: 'The client’s conversation_id of the call.' }),
    status: UploadStatus,
    reason: Nullable(Type.String({ description: 'Why the upload was rejected or expired; null otherwise.' })),
    filename: Type.String(),
    content_type: Type.String({ description: 'The Content-Type the upload URL pins.' }),
    size: Nullable(Type.Integer({ description: 'Bytes received; null until the bytes arrive.' })),
    media: Nullable(Media),
    expires_at: Type.String({ format: 'date-time', description: 'When the upload URL expires.' }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  {
    $id: 'Upload',
    examples: [
      {
        upload_id: 42,
        conversation_id: 'call-2026-0001',
        status: 'ready',
        reason: null,
        filename: 'call.wav',
        content_type: 'audio/wav',
        size: 1920044,
        media: {
          container: 'wav',
          format: 'Wave',
          duration_seconds: 60,
          has_audio: true,
          has_video: false,
          audio_streams: 1,
          video_streams: 0,
          audio_channels: 2,
          audio_codec: 'PCM',
          audio_sample_rate: 16000,
          video_codec: null,
          video_width: null,
          video_height: null,
        },
        expires_at: '2026-01-01T13:00:00.000Z',
        created_at: '2026-01-01T12:00:00.000Z',
        updated_at: '2026-01-01T12:00:03.120Z',
      },
      {
        upload_id: 43,
        conversation_id: 'call-2026-0002',
        status: 'rejected',
        reason: 'speaker separation is "channels" but the audio has 1 channel; two are needed',
        filename: 'call.mp3',
        content_type: 'audio/mpeg',
        size: 480000,
        media: null,
        expires_at: '2026-01-01T13:00:00.000Z',
        created_at: '2026-01-01T12:00:00.000Z',
        updated_at: '2026-01-01T12:00:02.000Z',
      },
    ],
  },
);

/** The upload routes. */
export const uploadRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get(
    '/api/v1/upload/:upload_id',
    {
      config: { scope: 'calls' },
      // The validator converts path text to numbers leniently ("1.5" would become upload 1): digits only.
      preValidation: async (request) => {
        const raw: unknown = request.params.upload_id;
        if (typeof raw === 'string' && !/^[0-9]+$/.test(raw)) {
          throw new ValidationError('must be integer', 'params.upload_id');
        }
      },
      schema: {
        tags: ['uploads'],
        summary: 'Show an upload and what its verification found',
        description:
          'After `call/create` returns an upload body, the client PUTs the raw bytes to `upload_url` with ' +
          '`Content-Type: upload_content_type`. The service then verifies them in the background: the ' +
          'container is read from the bytes and the streams probed. An upload is rejected when it is not ' +
          'media, when a declared video type is not that container, when an audio upload has no audio, when ' +
          'it is 250,000,000 bytes or more, or when the call separates speakers by `channels` but the audio ' +
          'has fewer than two. `media` is null until verified (and for a file that is not media).',
        security: SECURITY,
        params: Type.Object({
          upload_id: Type.Integer({
            minimum: 1,
            maximum: Number.MAX_SAFE_INTEGER,
            description: 'The upload_id.',
          }),
        }),
        response: {
          200: UploadResponse,
          ...errorResponses(...AUTHENTICATED_ERRORS, 404, 422),
        },
      },
    },
    async (request) => getUpload(services.database.db, request.principal, request.params.upload_id),
  );
};
