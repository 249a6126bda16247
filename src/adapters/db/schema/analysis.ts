/** What the worker makes of a call: its analysis and its transcription. */
import { sql } from 'drizzle-orm';
import { bigint, check, foreignKey, json, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { conversations } from './calls.ts';
import { createdAt, updatedAt } from './columns.ts';

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
    /**
     * The figures of decision 28 (duration_s … speech), null until ready: json, its text as the service wrote
     * it, which GET one call writes into its answer as it is (migration 0020).
     */
    figures: json('figures'),
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
