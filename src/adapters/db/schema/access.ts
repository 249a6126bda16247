/** Companies, their users, API keys, products and the grants that let a user see a product. */
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  foreignKey,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { createdAt } from './columns.ts';

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
