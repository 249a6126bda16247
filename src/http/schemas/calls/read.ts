/**
 * Schemas of the read side (decisions 23, 24 and 26): the list's query, a call as the list shows it, one
 * call with everything stored about it. Every object of an answer is closed, so the document says exactly
 * what a client gets.
 */
import { Type } from 'typebox';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../../domain/calls/read.ts';
import { TAG_TYPES } from '../../../domain/calls/tags.ts';
import { ANALYSIS_EXAMPLE, CallAnalysis } from '../analysis/analysis.ts';

const UPLOAD_STATUSES = ['pending', 'uploaded', 'ready', 'rejected', 'expired'] as const;
const STATES = ['created', 'live', 'stopped'] as const;
const EXAMPLE_ID = '5b0f9f2e-8d0c-4d0e-9b7a-2f1c3d4e5f60';
const EXAMPLE_CURSOR = 'WzE3NjM5ODU2MDAsIjViMGY5ZjJlLThkMGMtNGQwZS05YjdhLTJmMWMzZDRlNWY2MCJd';

const Iso = (description: string) =>
  Type.String({ format: 'date-time', description: `${description} (ISO 8601, UTC).` });

/** The path of a call: its own `id` (decision 21). */
export const CallParams = Type.Object(
  {
    id: Type.String({
      description: 'The call’s `id`, as the list or an event shows it. Any other value: 404.',
      examples: [EXAMPLE_ID],
    }),
  },
  { additionalProperties: false },
);

/** The list's query (decision 23). */
export const ListQuerySchema = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_PAGE_SIZE,
        default: DEFAULT_PAGE_SIZE,
        description: `Calls per page, 1–${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}), written in decimal.`,
        examples: [50],
      }),
    ),
    cursor: Type.Optional(
      Type.String({
        description:
          'The previous page’s `next_cursor`, as given (opaque). A cursor not of the form the service makes: 422 (it carries a position, not a permission: the company and visibility filters apply to every page).',
        examples: [EXAMPLE_CURSOR],
      }),
    ),
    agent_email: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 320,
        description: 'Calls of agents with this email, any case.',
      }),
    ),
    product_id: Type.Optional(Type.Integer({ minimum: 1, description: 'Calls filed under this product.' })),
    conversation_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description:
          'Calls with this `conversation_id` (one per agent): how to find a call made by call/create.',
        examples: ['call-2026-0001'],
      }),
    ),
    state: Type.Optional(Type.Enum(STATES, { description: 'The call’s state.' })),
    start_time_gte: Type.Optional(
      Type.Number({ description: 'Calls whose `start_time` is at or after this (epoch seconds).' }),
    ),
    start_time_lt: Type.Optional(
      Type.Number({ description: 'Calls whose `start_time` is before this (epoch seconds).' }),
    ),
    media: Type.Optional(
      Type.Enum(['none', ...UPLOAD_STATUSES], {
        description: 'The status of the call’s latest upload; `none`: the call has no upload.',
      }),
    ),
    tag: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        maxItems: 20,
        description:
          'Repeatable, at most 20. `KEY`: the call has the tag. `KEY:VALUE` (split at the first colon): its ' +
          'value written as text equals VALUE — integers in decimal without `+` or leading zeros, booleans ' +
          'as `true`/`false`. E.g. `tag=sale_closed:true&tag=score:7`.',
        examples: [['sale_closed:true', 'queue']],
      }),
    ),
  },
  {
    additionalProperties: false,
    description: 'Every filter is optional; filters combine with AND. An unknown parameter: 422 naming it.',
  },
);

const TagView = Type.Object(
  {
    key: Type.String(),
    value: Type.Union([Type.String(), Type.Integer(), Type.Boolean()]),
    type: Type.Enum(TAG_TYPES),
  },
  { additionalProperties: false },
);

const MediaView = Type.Union(
  [
    Type.Object(
      {
        upload_id: Type.Integer(),
        status: Type.Enum(UPLOAD_STATUSES),
        filename: Type.String(),
        content_type: Type.String({ description: 'The upload’s `upload_content_type`.' }),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: 'The call’s latest upload, or null when it has none.' },
);

const ITEM_FIELDS = {
  id: Type.String({ description: 'The service’s id of the call: opaque, stable.' }),
  conversation_id: Type.String({ description: 'The client’s id of the call.' }),
  agent: Type.Object(
    { id: Type.String(), email: Type.String() },
    { additionalProperties: false, description: 'The agent user of the call.' },
  ),
  product_id: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Null for a call made by call/start that no call/create has filed under a product yet.',
  }),
  start_time: Type.Number({ description: 'Epoch seconds, as sent on create.' }),
  state: Type.Enum(STATES),
  tags: Type.Array(TagView, { description: 'In the request’s form, ordered by key.' }),
  media: MediaView,
  has_transcript: Type.Boolean(),
  created_at: Iso('When the call was first recorded'),
  updated_at: Iso('When the call last changed'),
};

const EXAMPLE_ITEM = {
  id: EXAMPLE_ID,
  conversation_id: 'call-2026-0001',
  agent: { id: '0d9c4a63-2b1e-4f7a-9c55-8e2a1b3c4d5e', email: 'agent@example.com' },
  product_id: 7,
  start_time: 1763985600,
  state: 'stopped',
  tags: [
    { key: 'sale_closed', value: true, type: 'boolean' },
    { key: 'score', value: 7, type: 'integer' },
  ],
  media: { upload_id: 42, status: 'ready', filename: 'call.wav', content_type: 'audio/wav' },
  has_transcript: true,
  created_at: '2026-11-24T12:00:01.123Z',
  updated_at: '2026-11-24T12:31:40.005Z',
};

/** A call as the list shows it. */
export const CallItemSchema = Type.Object(ITEM_FIELDS, { additionalProperties: false });

/** A page of the list. */
export const CallPageResponse = Type.Object(
  {
    calls: Type.Array(CallItemSchema),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass as `cursor` for the next page; null on the last page.',
    }),
  },
  {
    additionalProperties: false,
    description: 'Newest `start_time` first; ties in one fixed order by `id`.',
    examples: [{ calls: [EXAMPLE_ITEM], next_cursor: EXAMPLE_CURSOR }],
  },
);

const UploadView = Type.Object(
  {
    upload_id: Type.Integer(),
    status: Type.Enum(UPLOAD_STATUSES),
    reason: Type.Union([Type.String(), Type.Null()], { description: 'Why it was rejected or expired.' }),
    filename: Type.String(),
    content_type: Type.String(),
    size: Type.Union([Type.Integer(), Type.Null()], { description: 'Bytes; null until uploaded.' }),
    duration_s: Type.Union([Type.Number(), Type.Null()], { description: 'Seconds, as verification found.' }),
    channels: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Audio channels, as verification found.',
    }),
    created_at: Iso('When the upload URL was issued'),
  },
  { additionalProperties: false },
);

/** A segment as stored: sent by the client, or made by the transcription (with `unknown` and `confidence`). */
const StoredSegment = Type.Object(
  {
    role: Type.Enum(['agent', 'customer', 'unknown'], {
      description: 'Who speaks; `unknown` only in a transcription of a mono recording.',
    }),
    text: Type.String({ description: 'Spoken text.' }),
    start: Type.Number({
      minimum: 0,
      description: 'Offset of the segment start, in seconds for a transcription.',
    }),
    stop: Type.Number({ minimum: 0, description: 'Offset of the segment end.' }),
    confidence: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1, description: 'The engine’s confidence, where it gives one.' }),
    ),
  },
  { additionalProperties: false },
);

/** The call's transcription by the configured engine (decision 29). */
export const CallTranscription = Type.Object(
  {
    status: Type.Enum(['pending', 'ready', 'failed']),
    reason: Type.Union([Type.String(), Type.Null()], {
      description: 'Why it failed (the engine’s error, or a client transcript that wins); null otherwise.',
    }),
    engine: Type.Union([Type.String(), Type.Null()], {
      description: 'The engine that made it, e.g. `pocketsphinx en-us` or `openai whisper-1`.',
    }),
    upload_id: Type.Union([Type.Integer(), Type.Null()], { description: 'The upload transcribed.' }),
    updated_at: Iso('When the status last changed'),
  },
  { additionalProperties: false, 'x-extension': true },
);

/** One call (decision 24). */
export const CallDetailResponse = Type.Object(
  {
    ...ITEM_FIELDS,
    speaker: Type.Object(
      {
        separation: Type.Enum(['diarize', 'channels']),
        channel_map: Type.Union([Type.Array(Type.Enum(['agent', 'customer'])), Type.Null()]),
      },
      { additionalProperties: false },
    ),
    transcript: Type.Union([Type.Array(StoredSegment), Type.Null()]),
    transcript_source: Type.Union([Type.Enum(['client', 'transcription']), Type.Null()], {
      description: '`client` when the client sent the transcript; `transcription` when the service made it.',
    }),
    metadata: Type.Record(Type.String(), Type.Unknown(), { description: 'Merged metadata; `{}` when none.' }),
    uploads: Type.Array(UploadView, { description: 'Every upload, newest first.' }),
    handoff_ids: Type.Array(Type.String(), { description: 'Call-handoff records linked to the call.' }),
    analysis: Type.Union([CallAnalysis, Type.Null()], {
      description:
        'The call’s analysis, or null when none was ever made (no ready recording, no transcript with times).',
    }),
    transcription: Type.Union([CallTranscription, Type.Null()], {
      description:
        'Extension. The transcription of the recording by the configured engine (TRANSCRIBER): pending, ' +
        'ready (the transcript, `transcript_source: "transcription"`) or failed with its reason; null when ' +
        'none was queued (no engine, no ready recording, or a client transcript).',
      'x-extension': true,
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        ...EXAMPLE_ITEM,
        speaker: { separation: 'channels', channel_map: ['agent', 'customer'] },
        transcript: [{ role: 'agent', text: 'Thanks for calling.', start: 0, stop: 1.4 }],
        transcript_source: 'client',
        metadata: { queue: 'billing' },
        uploads: [
          {
            upload_id: 42,
            status: 'ready',
            reason: null,
            filename: 'call.wav',
            content_type: 'audio/wav',
            size: 1920044,
            duration_s: 60.0,
            channels: 2,
            created_at: '2026-11-24T12:00:01.200Z',
          },
        ],
        handoff_ids: ['9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a'],
        analysis: ANALYSIS_EXAMPLE,
        transcription: null,
      },
    ],
  },
);

/** The 204 of an erasure: no body. */
export const ErasedResponse = Type.Null({ description: 'Erased: nothing of the call is readable any more.' });
