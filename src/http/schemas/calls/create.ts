/** The schema and documentation of POST /api/v1/call/create (spec 4.1, decisions 1–6, 9–11, 14). */
import { Type } from 'typebox';
import { MAX_START_TIME } from '../../../domain/calls/create.ts';
import {
  AUDIO_FORMATS,
  audioTypesOf,
  OCTET_STREAM,
  UNSUPPORTED_VIDEO_EXTENSIONS,
  VIDEO_CONTAINERS,
} from '../../../domain/uploads/media-types.ts';
import { type NamedExample, namedExamples } from '../examples.ts';
import { AgentEmail, ConversationId, Tags } from './shared.ts';

const Role = Type.Enum(['agent', 'customer']);

/** The most transcript segments one call/create may carry; more is a 422. */
export const MAX_TRANSCRIPT_SEGMENTS = 10_000;

const ChannelMap = Type.Array(Role, {
  minItems: 2,
  maxItems: 2,
  description:
    '[left, right] roles: ["agent", "customer"] or ["customer", "agent"]. Only meaningful with separation ' +
    '"channels"; accepted and without effect otherwise. When omitted, roles are identified automatically.',
});

/** A transcript segment (spec 2.2). */
export const Segment = Type.Object(
  {
    role: Type.Enum(['agent', 'customer'], { description: 'Who speaks.' }),
    text: Type.String({ description: 'Spoken text.' }),
    start: Type.Number({ minimum: 0, description: 'Offset of the segment start; not negative.' }),
    stop: Type.Number({ minimum: 0, description: 'Offset of the segment end; not less than start.' }),
  },
  { additionalProperties: false },
);

const Speaker = Type.Object(
  {
    separation: Type.Optional(
      Type.Enum(['diarize', 'channels'], {
        description: 'diarize (default) or channels (one speaker per channel).',
      }),
    ),
    channel_map: Type.Optional(ChannelMap),
  },
  {
    additionalProperties: false,
    description:
      'How speakers are told apart in a recording; omitted: diarization. Sent for an existing call and ' +
      'different from its own, it analyses the latest ready recording again with the new roles (and ' +
      'transcribes it again when the engine made its transcript).',
  },
);

const AGENT = 'agent@example.com';

function example(summary: string, extra: Record<string, unknown>): NamedExample {
  return {
    summary,
    value: { agent_email: AGENT, product_id: 1, conversation_id: 'call-2026-0001', ...extra },
  };
}

/** One request example per shape of spec 4.1, and one per container of the video table. */
function createExamples(): Record<string, NamedExample> {
  const out: Record<string, NamedExample> = {
    transcript_only: example('Transcript only: no upload, the success body answers', {
      transcript: [
        { role: 'agent', text: 'Thanks for calling, how can I help?', start: 0, stop: 2.4 },
        { role: 'customer', text: 'My invoice is wrong.', start: 2.9, stop: 4.1 },
      ],
    }),
    audio: example('Audio recording with filename and content_type', {
      filename: 'call-0001.wav',
      content_type: 'audio/wav',
    }),
    audio_auto_detect: example('Audio without content_type: the extension implies audio/mpeg', {
      filename: 'call-0001.mp3',
    }),
    audio_unknown_extension: example(`Audio of an unknown format: ${OCTET_STREAM} on the audio path`, {
      filename: 'call-0001.raw',
      content_type: OCTET_STREAM,
    }),
    stereo_channel_map: example('Stereo, one speaker per channel, customer on the left', {
      filename: 'call-0001.wav',
      content_type: 'audio/wav',
      speaker: { separation: 'channels', channel_map: ['customer', 'agent'] },
    }),
    stereo_auto_roles: example('Stereo, one speaker per channel, roles identified automatically', {
      filename: 'call-0001.wav',
      content_type: 'audio/wav',
      speaker: { separation: 'channels' },
    }),
    deprecated_channels: example('Deprecated `channels`: means speaker {separation: channels, channel_map}', {
      filename: 'call-0001.wav',
      content_type: 'audio/wav',
      channels: ['customer', 'agent'],
    }),
    audio_only_mp4: example('Audio-only .mp4: audio/mp4', {
      filename: 'call-0001.mp4',
      content_type: 'audio/mp4',
    }),
  };
  for (const c of VIDEO_CONTAINERS) {
    for (const ext of c.extensions) {
      out[`video_${ext}`] = example(`Video .${ext}: ${c.contentType}`, {
        filename: `call-0001.${ext}`,
        content_type: c.contentType,
      });
    }
  }
  out.start_time = example('With the start time, in seconds since the Unix epoch', {
    start_time: 1767225600.25,
    transcript: [{ role: 'agent', text: 'Hello.', start: 0, stop: 0.8 }],
  });
  out.tags = example('With typed tags', {
    transcript: [{ role: 'agent', text: 'Hello.', start: 0, stop: 0.8 }],
    tags: [
      { key: 'queue', type: 'string', value: 'billing' },
      { key: 'csat', type: 'integer', value: 5 },
      { key: 'escalated', type: 'boolean', value: false },
    ],
  });
  out.minted_id = {
    summary: 'Without conversation_id: the service mints a UUID and answers with it',
    value: { agent_email: AGENT, product_id: 1, transcript: [] },
  };
  return out;
}

/** The body of call/create. */
export const CreateCallBody = Type.Object(
  {
    agent_email: AgentEmail,
    product_id: Type.Integer({
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'A product the caller may see (product/list): otherwise 404; archived: 422.',
    }),
    conversation_id: Type.Optional(ConversationId),
    start_time: Type.Optional(
      Type.Number({
        description:
          `Seconds since the Unix epoch, fractions allowed; defaults to the time of the request. Above ` +
          `${MAX_START_TIME} (milliseconds by mistake) or negative: 422.`,
      }),
    ),
    filename: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'Base name of the media file; with it the answer is an upload. No `/`, `\\`, control characters, ' +
          '`.` or `..`; at most 255 bytes.',
      }),
    ),
    content_type: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'MIME type of the file, needs filename. Compared case-insensitively, parameters after `;` ignored; ' +
          'upload_content_type echoes it exactly. See the tables above.',
      }),
    ),
    speaker: Type.Optional(Speaker),
    channels: Type.Optional(
      Type.Array(Role, {
        minItems: 2,
        maxItems: 2,
        deprecated: true,
        description:
          'Deprecated: use speaker. Two distinct roles, [left, right]; means speaker {separation: "channels", ' +
          'channel_map: channels}. With a speaker that says otherwise: 422.',
      }),
    ),
    transcript: Type.Optional(
      Type.Array(Segment, {
        maxItems: MAX_TRANSCRIPT_SEGMENTS,
        description: `Segments in order; replaces a stored transcript. At most ${MAX_TRANSCRIPT_SEGMENTS} segments (more: 422).`,
      }),
    ),
    tags: Type.Optional(Tags),
  },
  { additionalProperties: false, ...namedExamples(createExamples()) },
);

/** The success body of call/create (decision 6). */
const CreatedCall = Type.Object(
  { success: Type.Boolean(), conversation_id: Type.String() },
  { additionalProperties: false },
);

/** UploadURLResponse (spec 2.5). */
const UploadUrlResponse = Type.Object(
  {
    upload_id: Type.Integer({ description: 'Identifier of the upload.' }),
    conversation_id: Type.String(),
    upload_url: Type.String({ description: 'Signed URL: PUT the raw bytes here.' }),
    expires_in: Type.Integer({ description: 'Seconds for which upload_url is valid.' }),
    upload_content_type: Type.String({
      description: 'Send exactly this Content-Type with the PUT; the signed URL pins it (else 403).',
    }),
  },
  { additionalProperties: false },
);

/** The 200 of call/create: the success body without filename, the upload body with it. */
export const CreateCallResponse = Type.Union([CreatedCall, UploadUrlResponse], {
  description: 'Without filename the success body; with filename the upload body (UploadURLResponse).',
  ...namedExamples({
    success: {
      summary: 'No filename: the call is recorded',
      value: { success: true, conversation_id: 'call-2026-0001' },
    },
    upload: {
      summary: 'With filename: PUT the file to upload_url with Content-Type upload_content_type',
      value: {
        upload_id: 42,
        conversation_id: 'call-2026-0001',
        upload_url: 'https://cqs.example.com/api/v1/uploads/…?expires=1767229200&signature=…',
        expires_in: 3600,
        upload_content_type: 'audio/wav',
      },
    },
  }),
});

const row = (cells: string[]) => `| ${cells.join(' | ')} |`;

/** The description of call/create, with the media tables rendered from the same table validation uses. */
export function createCallDescription(): string {
  const audio = AUDIO_FORMATS.map((f) => row([`.${f.extension}`, f.contentType, audioTypesOf(f).join(', ')]));
  const video = VIDEO_CONTAINERS.map((c) =>
    row([c.extensions.map((e) => `.${e}`).join(', '), c.contentType]),
  );
  return [
    'Records a call of the agent (agent_email) under conversation_id. Calls are unique by agent and',
    'conversation_id: creating an existing pair updates it (a sent transcript replaces the stored one, sent tags',
    'are upserted, product_id is updated, speaker and start_time change only when sent, and with filename a new',
    'upload is issued), so a retried create never makes a duplicate. Each request is one transaction: in every',
    'error case nothing is recorded.',
    '',
    'Without filename the answer is `{"success": true, "conversation_id"}`. With filename it is the upload body:',
    'PUT the raw bytes (under 250 MB) to upload_url with `Content-Type: <upload_content_type>`.',
    '',
    '**Audio path.** content_type may be omitted: upload_content_type is then the type the extension implies, or',
    `${OCTET_STREAM} for any other extension or none. When sent, content_type must match the extension:`,
    '',
    row(['Extension', 'Without content_type', 'Accepted content_type']),
    row(['---', '---', '---']),
    ...audio,
    row(['other or none', OCTET_STREAM, OCTET_STREAM]),
    '',
    '**Video.** content_type is required and must be the container’s type; the extension must match it:',
    '',
    row(['Extension', 'content_type']),
    row(['---', '---']),
    ...video,
    '',
    'Ambiguous containers: an audio-only .mp4 uses audio/mp4 and a video .mp4 video/mp4; likewise .webm',
    '(audio/webm, video/webm) and .3gp (audio/3gpp, video/3gpp). A video-only extension (.mov, .flv, …)',
    `without content_type is a 422. Other video containers (${UNSUPPORTED_VIDEO_EXTENSIONS.map((e) => `.${e}`).join(', ')})`,
    `are a 422 whatever content_type says. ${OCTET_STREAM} with a known extension is a 422 (the extension must`,
    'match the type); a file name without extension is accepted only without content_type or with',
    `${OCTET_STREAM}. content_type without filename is a 422.`,
  ].join('\n');
}
