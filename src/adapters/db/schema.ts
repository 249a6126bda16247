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
    scopes: text('scopes').array().notNull(),
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
    productId: bigint('product_id', { mode: 'number' }).notNull(),
    /** Seconds since the Unix epoch, fractions allowed. */
    startTime: doublePrecision('start_time').notNull(),
    speakerSeparation: text('speaker_separation', { enum: ['diarize', 'channels'] })
      .notNull()
      .default('diarize'),
    /** [left, right] roles when separation is `channels` and a map was sent; null means identify automatically. */
    channelMap: text('channel_map').array(),
    /** The transcript segments in the order they were sent, or null when none was sent. */
    transcript: jsonb('transcript'),
    /** `created` until started, `live` after call/start, `stopped` after call/stop. */
    state: text('state', { enum: ['created', 'live', 'stopped'] })
      .notNull()
      .default('created'),
    metadata: jsonb('metadata').notNull().default({}),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ columns: [t.companyId, t.id] }),
    uniqueIndex('conversations_pair_idx').on(t.companyId, t.agentUserId, t.conversationId),
    index('conversations_company_conversation_idx').on(t.companyId, t.conversationId),
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
