/** Calls (conversations), their tags and their uploads. */
import { sql } from 'drizzle-orm';
import {
  bigint,
  check,
  doublePrecision,
  foreignKey,
  index,
  json,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { products, users } from './access.ts';
import { createdAt, timeOrderedId, updatedAt } from './columns.ts';

/** A call: unique by (agent user, conversation_id) within a company. */
export const conversations = pgTable(
  'conversations',
  {
    companyId: uuid('company_id').notNull(),
    id: timeOrderedId(),
    agentUserId: uuid('agent_user_id').notNull(),
    conversationId: text('conversation_id').notNull(),
    /** Null for a call that call/start created until a call/create on the same pair sets one. */
    productId: bigint('product_id', { mode: 'number' }),
    /** Seconds since the Unix epoch, fractions allowed. */
    startTime: doublePrecision('start_time').notNull(),
    speakerSeparation: text('speaker_separation', { enum: ['diarize', 'channels'] })
      .notNull()
      .default('diarize'),
    /** [left, right] roles when separation is `channels` and a map was sent; null means identify automatically. */
    channelMap: text('channel_map').array(),
    /**
     * The transcript segments in the order they were sent, or null when none was sent. `json`, not `jsonb`:
     * PostgreSQL keeps the text as written and answers it without conversion, and the service never looks
     * inside it in SQL. Writing a 1,000-segment transcript back out of jsonb took PostgreSQL 3 ms of CPU at
     * every call read (and made 147 kB of text from the service's 140 kB).
     */
    transcript: json('transcript'),
    /**
     * Who made the transcript: `client` (call/create) or `transcription` (the configured engine). Null
     * with a transcript means a client's, stored before this column existed.
     */
    transcriptSource: text('transcript_source', { enum: ['client', 'transcription'] }),
    /** `created` until started, `live` after call/start, `stopped` after call/stop. */
    state: text('state', { enum: ['created', 'live', 'stopped'] })
      .notNull()
      .default('created'),
    metadata: jsonb('metadata').notNull().default({}),
    /**
     * The newest upload (highest id) and its status, kept by a trigger on `uploads` in the transaction
     * that changes the upload, so the list's `media` filter is an indexed column, not a subquery per call.
     */
    latestUploadId: bigint('latest_upload_id', { mode: 'number' }),
    latestUploadStatus: text('latest_upload_status', {
      enum: ['pending', 'uploaded', 'ready', 'rejected', 'expired'],
    }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ columns: [t.companyId, t.id] }),
    uniqueIndex('conversations_pair_idx').on(t.companyId, t.agentUserId, t.conversationId),
    index('conversations_company_conversation_idx').on(t.companyId, t.conversationId),
    // The list's order is (start_time desc, id desc); each filter has an index that leads with it and
    // then follows that order, so a page is an index range scan whatever the filter (decision 23).
    index('conversations_list_idx').on(t.companyId, t.startTime, t.id),
    index('conversations_agent_list_idx').on(t.companyId, t.agentUserId, t.startTime, t.id),
    index('conversations_product_list_idx').on(t.companyId, t.productId, t.startTime, t.id),
    index('conversations_state_list_idx').on(t.companyId, t.state, t.startTime, t.id),
    index('conversations_media_list_idx').on(t.companyId, t.latestUploadStatus, t.startTime, t.id),
    foreignKey({ columns: [t.companyId, t.agentUserId], foreignColumns: [users.companyId, users.id] }),
    foreignKey({ columns: [t.companyId, t.productId], foreignColumns: [products.companyId, products.id] }),
    check('conversations_state_check', sql`${t.state} in ('created', 'live', 'stopped')`),
    check('conversations_separation_check', sql`${t.speakerSeparation} in ('diarize', 'channels')`),
  ],
);

/** A typed tag of a conversation; one value per key. */
export const conversationTags = pgTable(
  'conversation_tags',
  {
    companyId: uuid('company_id').notNull(),
    conversationUuid: uuid('conversation_uuid').notNull(),
    key: text('key').notNull(),
    type: text('type', { enum: ['string', 'integer', 'boolean'] }).notNull(),
    /** The JSON value, whose JSON type agrees with `type`. */
    value: jsonb('value').notNull(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ columns: [t.companyId, t.conversationUuid, t.key] }),
    // The list's tag filter: calls with a key, or with a key whose value written as text is VALUE.
    index('conversation_tags_key_value_idx').on(
      t.companyId,
      t.key,
      sql`(${t.value} #>> '{}')`,
      t.conversationUuid,
    ),
    foreignKey({
      columns: [t.companyId, t.conversationUuid],
      foreignColumns: [conversations.companyId, conversations.id],
    }).onDelete('cascade'),
    check('conversation_tags_type_check', sql`${t.type} in ('string', 'integer', 'boolean')`),
  ],
);

/** A media upload issued by call/create: a signed URL, then the object and what verification found. */
export const uploads = pgTable(
  'uploads',
  {
    companyId: uuid('company_id').notNull(),
    id: bigint('id', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
    conversationUuid: uuid('conversation_uuid').notNull(),
    filename: text('filename').notNull(),
    /** Exactly the Content-Type the signed URL pins. */
    contentType: text('content_type').notNull(),
    /** `audio` or `video`: the path decision 14 put the upload on. */
    mediaKind: text('media_kind', { enum: ['audio', 'video'] }).notNull(),
    objectKey: text('object_key').notNull(),
    status: text('status', { enum: ['pending', 'uploaded', 'ready', 'rejected', 'expired'] })
      .notNull()
      .default('pending'),
    reason: text('reason'),
    size: bigint('size', { mode: 'number' }),
    probe: jsonb('probe'),
    /** The ETag of the bytes last verified, where the storage gives one (S3): a later PUT changes it. */
    objectEtag: text('object_etag'),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ columns: [t.companyId, t.id] }),
    uniqueIndex('uploads_object_key_idx').on(t.companyId, t.objectKey),
    index('uploads_status_expiry_idx').on(t.status, t.expiresAt),
    // A call's uploads, newest first (GET /api/v1/calls/{id}, erasure).
    index('uploads_conversation_idx').on(t.companyId, t.conversationUuid, t.id),
    foreignKey({
      columns: [t.companyId, t.conversationUuid],
      foreignColumns: [conversations.companyId, conversations.id],
    }),
    check(
      'uploads_status_check',
      sql`${t.status} in ('pending', 'uploaded', 'ready', 'rejected', 'expired')`,
    ),
  ],
);
