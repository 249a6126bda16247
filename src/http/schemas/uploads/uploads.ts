/** The schemas of the upload endpoints: an upload's status and what verification found. */
import { Type } from 'typebox';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

/** What verification found in the bytes. */
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

/** Where an upload stands. */
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

/** An upload as GET /api/v1/upload/{upload_id} shows it. */
export const UploadResponse = Type.Object(
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

/** The path parameters of GET /api/v1/upload/{upload_id}. */
export const UploadParams = Type.Object({
  upload_id: Type.Integer({
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'The upload_id.',
  }),
});
