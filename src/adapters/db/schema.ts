/**
 * The whole data model. Every tenant-owned table leads with `company_id`, and its primary key, unique
 * keys and foreign keys all include it, so the tables can be distributed by company (for example as
 * Citus distributed tables co-located on `company_id`). `companies` and `api_keys` are the two tables
 * looked up without a company (a key is how the company is found), so they would be reference tables.
 */
export * from './schema/access.ts';
export * from './schema/analysis.ts';
export * from './schema/calls.ts';
export * from './schema/events.ts';
export * from './schema/handoffs.ts';
export * from './schema/jobs.ts';
