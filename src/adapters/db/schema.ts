/**
 * The whole data model. Every tenant-owned table leads with `company_id`, and its primary key, unique
 * keys and foreign keys all include it, so the tables can be distributed by company (for example as
 * Citus distributed tables co-located on `company_id`). `companies` and `api_keys` are the two tables
 * looked up without a company (a key is how the company is found), so they would be reference tables.
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  customType,
  doublePrecision,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
const updatedAt = () => timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();

/** A customer of the service: a call center. */
export const companies = pgTable('companies', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  /** Calls whose start_time is older than this many days are erased by the daily sweep; null keeps them. */
  retentionDays: integer('retention_days'),
  createdAt: createdAt(),
});

/** A person of a company. Emails are not unique and are matched case-insensitively. */
export const users = pgTable(
  'users',
  {
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id),
    id: uuid('id').notNull().defaultRandom(),
    email: text('email').notNull(),
    role: text('role', { enum: ['admin', 'agent'] }).notNull(),
    active: boolean('active').notNull().default(true),
    /** The `ref` a seed file gave the user, so seeding again finds the same user. */
    seedRef: text('seed_ref'),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.companyId, t.id] }),
    uniqueIndex('users_company_seed_ref_idx').on(t.companyId, t.seedRef),
    index('users_company_email_idx').on(t.companyId, sql`lower(${t.email})`),
    check('users_role_check', sql`${t.role} in ('admin', 'agent')`),
  ],
);

/**
 * The scopes a key can carry (decision 22). Defined beside the column that stores them, so the keys'
 * repository and the domain share one list without the adapters importing the domain.
 */
export const SCOPES = [
  'calls',
  'handoff:write',
  'calls:read',
  'calls:delete',
  'events:read',
  'webhooks',
] as const;
/** One scope. */
export type Scope = (typeof SCOPES)[number];

/** An API key of a user. Only a SHA-256 hash of the key is stored. */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    companyId: uuid('company_id').notNull(),
    userId: uuid('user_id').notNull(),
    keyHash: text('key_hash').notNull(),
    /** The first characters of the key, so an operator can tell keys apart without the secret. */
    keyPrefix: text('key_prefix').notNull(),
    scopes: text('scopes').array().$type<Scope[]>().notNull(),
    createdAt: createdAt(),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    uniqueIndex('api_keys_key_hash_idx').on(t.keyHash),
    foreignKey({ columns: [t.companyId, t.userId], foreignColumns: [users.companyId, users.id] }),
  ],
);

/** A product a company sells or supports; calls are filed under one. */
export const products = pgTable(
  'products',
  {
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id),
    id: bigint('id', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
    name: text('name').notNull(),
    status: text('status', { enum: ['active', 'archived'] })
      .notNull()
      .default('active'),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.companyId, t.id] }),
    uniqueIndex('products_company_name_idx').on(t.companyId, t.name),
    check('products_status_check', sql`${t.status} in ('active', 'archived')`),
  ],
);

/** A product made visible to a non-admin user. */
export const productGrants = pgTable(
  'product_grants',
  {
    companyId: uuid('company_id').notNull(),
    productId: bigint('product_id', { mode: 'number' }).notNull(),
    userId: uuid('user_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.companyId, t.productId, t.userId] }),
    index('product_grants_user_idx').on(t.companyId, t.userId),
    foreignKey({ columns: [t.companyId, t.productId], foreignColumns: [products.companyId, products.id] }),
    foreignKey({ columns: [t.companyId, t.userId], foreignColumns: [users.companyId, users.id] }),
  ],
);

/** A call: unique by (agent user, conversation_id) within a company. */
export const conversations = pgTable(
  'conversations',
  {
    companyId: uuid('company_id').notNull(),
    id: uuid('id').notNull().defaultRandom(),
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
    /** The transcript segments in the order they were sent, or null when none was sent. */
    transcript: jsonb('transcript'),
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

/**
 * A call-handoff record. Immutability once final is enforced by a trigger (see the migrations), not only
 * by the code. `version` increases on every change and is the record's ETag.
 */
export const callHandoffs = pgTable(
  'call_handoffs',
  {
    companyId: uuid('company_id').notNull(),
    id: uuid('id').notNull().defaultRandom(),
    conversationUuid: uuid('conversation_uuid'),
    metadata: jsonb('metadata').notNull().default({}),
    final: boolean('final').notNull().default(false),
    version: integer('version').notNull().default(1),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    finalizedAt: timestamp('finalized_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    primaryKey({ columns: [t.companyId, t.id] }),
    index('call_handoffs_open_idx').on(t.createdAt).where(sql`not ${t.final}`),
    // A call's handoff records (GET /api/v1/calls/{id}, erasure).
    index('call_handoffs_conversation_idx').on(t.companyId, t.conversationUuid),
    foreignKey({
      columns: [t.companyId, t.conversationUuid],
      foreignColumns: [conversations.companyId, conversations.id],
    }),
    check('call_handoffs_final_check', sql`${t.final} = (${t.finalizedAt} is not null)`),
  ],
);

/** The job queue: work that follows an upload or a timer, claimed with FOR UPDATE SKIP LOCKED. */
export const jobs = pgTable(
  'jobs',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    /** The company the job works for; null for service-wide work such as sweeps. */
    companyId: uuid('company_id'),
    kind: text('kind').notNull(),
    payload: jsonb('payload').notNull().default({}),
    /** At most one queued job per key: enqueueing the same key twice is a no-op. */
    dedupeKey: text('dedupe_key'),
    runAt: timestamp('run_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    attempts: integer('attempts').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull().default(5),
    lockedUntil: timestamp('locked_until', { withTimezone: true, mode: 'date' }),
    lastError: text('last_error'),
    createdAt: createdAt(),
  },
  (t) => [index('jobs_due_idx').on(t.runAt), uniqueIndex('jobs_dedupe_idx').on(t.dedupeKey)],
);

/** PostgreSQL's 64-bit transaction id (`xid8`), kept as its decimal text: it does not fit a JS number. */
const xid8 = customType<{ data: string; driverData: string }>({ dataType: () => 'xid8' });

/**
 * The event log (decision 27), written in the transaction of the change it tells of (the outbox). `txid`
 * is the writing transaction's id: readers serve only events of transactions older than every one still
 * running, ordered by (`txid`, `seq`), so a reader's cursor never passes an event that commits later.
 */
export const events = pgTable(
  'events',
  {
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id),
    id: uuid('id').notNull().defaultRandom(),
    /** The transaction that wrote the event (pg_current_xact_id(), the top-level id in a savepoint). */
    txid: xid8('txid').notNull().default(sql`pg_current_xact_id()`),
    /** The order of events within one transaction. */
    seq: bigint('seq', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
    type: text('type').notNull(),
    data: jsonb('data').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.companyId, t.id] }),
    index('events_company_position_idx').on(t.companyId, t.txid, t.seq),
    index('events_position_idx').on(t.txid, t.seq),
    index('events_created_idx').on(t.createdAt),
  ],
);

/**
 * How far the retention cleanup has deleted a company's events: a cursor below this position asks for
 * events that are gone (410).
 */
export const eventPurges = pgTable('event_purges', {
  companyId: uuid('company_id')
    .primaryKey()
    .references(() => companies.id),
  txid: xid8('txid').notNull(),
  seq: bigint('seq', { mode: 'number' }).notNull(),
  purgedAt: timestamp('purged_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

/** A company's webhook endpoint (decision 27). The secret is kept to sign with; it is shown only on create and rotation. */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id),
    id: uuid('id').notNull().defaultRandom(),
    url: text('url').notNull(),
    /** The event types sent; null means every type. */
    types: text('types').array(),
    description: text('description'),
    enabled: boolean('enabled').notNull().default(true),
    secret: text('secret').notNull(),
    /** The secret before the last rotation, still signed with until `previousSecretUntil`. */
    previousSecret: text('previous_secret'),
    previousSecretUntil: timestamp('previous_secret_until', { withTimezone: true, mode: 'date' }),
    /** When the endpoint's deliveries started failing without a success since; null while healthy. */
    failingSince: timestamp('failing_since', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.companyId, t.id] })],
);

/** One event sent (or being sent) to one endpoint, with every attempt. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    companyId: uuid('company_id').notNull(),
    id: uuid('id').notNull().defaultRandom(),
    endpointId: uuid('endpoint_id').notNull(),
    eventId: text('event_id').notNull(),
    eventType: text('event_type').notNull(),
    /** The event object as sent: kept here so retries and redeliveries do not depend on event retention. */
    payload: jsonb('payload').notNull(),
    status: text('status', { enum: ['pending', 'delivered', 'failed'] })
      .notNull()
      .default('pending'),
    /** Every attempt: `{at, status_code, error, duration_ms, excerpt}`. */
    attempts: jsonb('attempts').notNull().default([]),
    /** Attempts of the current round (a redelivery starts a new round); drives the retry schedule. */
    roundAttempts: integer('round_attempts').notNull().default(0),
    /** When the next attempt is due; null once delivered or failed. */
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ columns: [t.companyId, t.id] }),
    uniqueIndex('webhook_deliveries_event_idx').on(t.companyId, t.endpointId, t.eventId),
    index('webhook_deliveries_list_idx').on(t.companyId, t.endpointId, t.createdAt),
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    foreignKey({
      columns: [t.companyId, t.endpointId],
      foreignColumns: [webhookEndpoints.companyId, webhookEndpoints.id],
    }).onDelete('cascade'),
    check('webhook_deliveries_status_check', sql`${t.status} in ('pending', 'delivered', 'failed')`),
  ],
);

/** How far the webhook fan-out has read the event log (one row, service-wide). */
export const webhookDispatch = pgTable('webhook_dispatch', {
  id: integer('id').primaryKey(),
  txid: xid8('txid').notNull(),
  seq: bigint('seq', { mode: 'number' }).notNull(),
});

/**
 * A call's analysis (decision 28): who spoke when and the figures made of it, one row per call. Made from
 * the latest ready upload or from the transcript; each queueing starts a new run, and only the latest
 * run's result is stored. Erasing the call erases it.
 */
export const callAnalyses = pgTable(
  'call_analyses',
  {
    companyId: uuid('company_id').notNull(),
    conversationUuid: uuid('conversation_uuid').notNull(),
    status: text('status', { enum: ['pending', 'ready', 'failed'] }).notNull(),
    reason: text('reason'),
    source: text('source', { enum: ['recording', 'transcript'] }).notNull(),
    /** The analysis queued last: a job stores its result only while the row still carries its run. */
    runId: uuid('run_id').notNull(),
    /** The upload analysed when the source is a recording. */
    uploadId: bigint('upload_id', { mode: 'number' }),
    /** The figures of decision 28 (duration_s … speech), null until ready. */
    figures: jsonb('figures'),
    /** The speech detector and decoder that made it (`energy`, `bundled ffmpeg …`), for operators. */
    method: text('method'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ columns: [t.companyId, t.conversationUuid] }),
    foreignKey({
      columns: [t.companyId, t.conversationUuid],
      foreignColumns: [conversations.companyId, conversations.id],
    }).onDelete('cascade'),
    check('call_analyses_status_check', sql`${t.status} in ('pending', 'ready', 'failed')`),
    check('call_analyses_source_check', sql`${t.source} in ('recording', 'transcript')`),
  ],
);

/**
 * A call's transcription by the configured engine (decision 29), one row per call: pending, ready or failed
 * with its reason. Each queueing starts a new run; only the latest run's result is stored. The transcript
 * itself goes to `conversations.transcript`, never over a client's. Erasing the call erases it.
 */
export const callTranscriptions = pgTable(
  'call_transcriptions',
  {
    companyId: uuid('company_id').notNull(),
    conversationUuid: uuid('conversation_uuid').notNull(),
    status: text('status', { enum: ['pending', 'ready', 'failed'] }).notNull(),
    reason: text('reason'),
    /** The transcription queued last: a job stores its result only while the row still carries its run. */
    runId: uuid('run_id').notNull(),
    /** The upload transcribed. */
    uploadId: bigint('upload_id', { mode: 'number' }),
    /** The engine (and model) that made it, e.g. `pocketsphinx en-us`, for operators and clients. */
    engine: text('engine'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ columns: [t.companyId, t.conversationUuid] }),
    foreignKey({
      columns: [t.companyId, t.conversationUuid],
      foreignColumns: [conversations.companyId, conversations.id],
    }).onDelete('cascade'),
    check('call_transcriptions_status_check', sql`${t.status} in ('pending', 'ready', 'failed')`),
  ],
);
