/** Schemas of GET /api/v1/calls/{id}/recording (decision 25). */
import { Type } from 'typebox';

/** `?redirect=false` answers the link as JSON instead of a 302. */
export const RecordingQuery = Type.Object(
  {
    redirect: Type.Optional(
      Type.Union([Type.Literal('true'), Type.Literal('false')], {
        default: 'true',
        description: '`false`: answer 200 with the URL as JSON instead of a 302 redirect to it.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The 200 answer with `redirect=false`. */
export const RecordingLinkResponse = Type.Object(
  {
    url: Type.String({
      description:
        'A signed GET URL of the recording (embedded storage: also HEAD; S3: a presigned GET). It serves ' +
        'the upload’s exact Content-Type, Content-Length, ETag and `Accept-Ranges: bytes`, and single ranges.',
    }),
    expires_in: Type.Integer({ description: 'Seconds the URL stays valid (RECORDING_URL_EXPIRES_IN).' }),
    content_type: Type.String({ description: 'The upload’s `upload_content_type`, as the URL serves it.' }),
    size: Type.Integer({ description: 'Bytes of the recording.' }),
  },
  {
    $id: 'RecordingLink',
    additionalProperties: false,
    examples: [
      {
        url:
          'https://cqs.example.com/storage/v1/object/0e5c…/2026/11/23/8f1d….wav' +
          '?X-Cqs-Expires=1763900000&X-Cqs-Content-Type=audio%2Fwav&X-Cqs-Signature=9b1c…',
        expires_in: 300,
        content_type: 'audio/wav',
        size: 1920044,
      },
    ],
  },
);

/** The 302 answer: no body, the URL in `Location`. */
export const RecordingRedirect = Type.Null({
  description: 'Redirect to the signed URL in `Location` (valid `RECORDING_URL_EXPIRES_IN` seconds).',
  headers: {
    Location: { type: 'string', format: 'uri', description: 'The signed URL of the recording.' },
    'Cache-Control': { type: 'string', description: '`no-store`: the URL expires.' },
  },
});
