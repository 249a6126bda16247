/** Schemas and OpenAPI text of the call-handoff endpoints (spec 2.6, 4.5; decisions 18–19). */
import { Type } from 'typebox';
import { MAX_METADATA_KEYS } from '../../../domain/limits.ts';
import { METADATA_LIMITS } from '../common.ts';

const ID = '3f2c9a4e-8b1d-4c6f-9e2a-5d7b1c0e4f21';

/** A metadata object: any top-level keys. */
export const Metadata = Type.Record(Type.String(), Type.Unknown(), {
  description: `Key/value data collected during the call. Any JSON object. ${METADATA_LIMITS}`,
  maxProperties: MAX_METADATA_KEYS,
  examples: [{ intent: 'billing', customer_tier: 'gold' }],
});

const EXAMPLE = {
  handoff_id: ID,
  final: true,
  metadata: { intent: 'billing', customer_tier: 'gold', summary: 'Wants a refund for March.' },
  created_at: '2026-11-22T09:14:03.120455Z',
  updated_at: '2026-11-22T09:17:41.908112Z',
  finalized_at: '2026-11-22T09:17:41.908112Z',
};

/** CallHandoffSchema (spec 2.6): all six fields are always present. */
export const CallHandoff = Type.Object(
  {
    handoff_id: Type.String({ format: 'uuid', description: 'Minted by the service for one call handoff.' }),
    final: Type.Boolean({
      description: 'true once the record is finalized and immutable; false while it is still being written.',
    }),
    metadata: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'While `final` is false, keys may be missing or hold intermediate values that will change. ' +
        'Once `final` is true it never changes.',
    }),
    created_at: Type.String({ format: 'date-time', description: 'Creation time (UTC, microseconds).' }),
    updated_at: Type.String({
      format: 'date-time',
      description: 'Last change (UTC, microseconds); strictly later after every change.',
    }),
    finalized_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'null while `final` is false; the time of finalization once it is true.',
    }),
  },
  { description: 'A call-handoff record.', examples: [EXAMPLE] },
);

/** Path parameters of every record endpoint. */
export const HandoffParams = Type.Object({
  handoff_id: Type.String({ format: 'uuid', description: 'The record id; not a UUID: 422.' }),
});

/** Query of the reader: the long-poll extension. */
export const ReadQuery = Type.Object({
  wait: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 30,
      description:
        'Extension: long poll. Seconds (0–30, fractions allowed; outside: 422) to wait, when the ' +
        'record is not final, for it to change or become final before answering. With an `If-None-Match` ' +
        'that names the current version, waits for a newer one and answers 304 if none came in time.',
      examples: [25],
    }),
  ),
});

/** Request headers of the reader. */
export const ReadHeaders = Type.Object({
  'if-none-match': Type.Optional(
    Type.String({
      description: 'An ETag from an earlier answer: 304 (no body) when the record is still at that version.',
      examples: [`"${ID}-v7"`],
    }),
  ),
});

const ETAG_HEADER = {
  type: 'string',
  description: 'Strong entity tag of this version: `"<handoff_id>-v<version>"`.',
};
const CACHE_HEADER = {
  type: 'string',
  description: '`private, max-age=31536000, immutable` for a final record; `no-store` for a partial one.',
};

const VARY_HEADER = {
  type: 'string',
  description:
    '`Authorization` for a final record (a cached copy is for the key that read it); absent for a partial one.',
};

/** Headers every answer with a record carries. */
export const RECORD_HEADERS = {
  headers: { ETag: ETAG_HEADER, 'Cache-Control': CACHE_HEADER, Vary: VARY_HEADER },
};

/** The 200 answer of the reader (a record with its caching headers). */
export const RecordResponse = Type.Object(CallHandoff.properties, {
  description: 'The record, with `ETag` and `Cache-Control`.',
  examples: [EXAMPLE],
  ...RECORD_HEADERS,
});

/** The 201 answer of create: the record, its caching headers and where to read it. */
export const CreatedResponse = Type.Object(CallHandoff.properties, {
  description: 'The new record, with `ETag`, `Cache-Control` and `Location` (its reader URL).',
  examples: [{ ...EXAMPLE, final: false, finalized_at: null, updated_at: EXAMPLE.created_at }],
  headers: {
    ...RECORD_HEADERS.headers,
    Location: {
      type: 'string',
      description: 'The path of the new record: `/api/v1/call-handoff/<handoff_id>`.',
    },
  },
});

/** The 304 answer: no body. */
export const NotModifiedResponse = Type.Null({
  description:
    'Not modified: `If-None-Match` names the current version (after waiting, when `wait` was given). No body.',
  ...RECORD_HEADERS,
});

/** The body of POST /api/v1/call-handoff. */
export const CreateBody = Type.Object(
  {
    metadata: Type.Optional(Metadata),
    conversation_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description:
          'Links the record to this conversation of the caller’s company. None: 404. Held by more than ' +
          'one agent: 409, unless `agent_email` picks one.',
      }),
    ),
    agent_email: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 320,
        description:
          'Only with `conversation_id`: the agent whose conversation it is (case-insensitive). No such ' +
          'active user: 404; several: 409 with `conflicting_user_ids`.',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ metadata: { intent: 'billing' }, conversation_id: 'call-2026-11-22-0042' }],
  },
);

/** The body of PATCH /api/v1/call-handoff/{handoff_id}. */
export const MergeBody = Type.Object(
  {
    metadata: Type.Record(Type.String(), Type.Unknown(), {
      description: `Top-level keys to set; a key whose value is null is removed. Nested objects are replaced. ${METADATA_LIMITS}`,
      maxProperties: MAX_METADATA_KEYS,
    }),
  },
  { additionalProperties: false, examples: [{ metadata: { customer_tier: 'gold', intent: null } }] },
);

/** The body of POST /api/v1/call-handoff/{handoff_id}/finalize (optional). */
export const FinalizeBody = Type.Object(
  {
    metadata: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: `A last merge, as PATCH, applied in the same statement that finalizes. ${METADATA_LIMITS}`,
        maxProperties: MAX_METADATA_KEYS,
      }),
    ),
  },
  { additionalProperties: false, examples: [{ metadata: { summary: 'Wants a refund for March.' } }] },
);

/** The 409 of create: an ambiguous conversation, or an agent_email held by several active users. */
export const CreateConflictResponse = Type.Object(
  {
    error: Type.String(),
    agent_email: Type.Optional(Type.String()),
    conflicting_user_ids: Type.Optional(Type.Array(Type.String())),
  },
  {
    description:
      'conversation_id is held by conversations of several agents (send `agent_email`), or agent_email ' +
      'matches several active users (then with `agent_email` and `conflicting_user_ids`).',
    examples: [
      {
        error:
          'conversation_id "call-2026-11-22-0042" is ambiguous: more than one agent has a conversation ' +
          'with it; send agent_email to choose',
      },
    ],
  },
);

/** The 409 of every write to a final record. */
export const FinalConflictResponse = Type.Object(
  { error: Type.String() },
  {
    description: 'The record is final: it never changes again.',
    examples: [{ error: 'call handoff record is final and cannot change' }],
  },
);
