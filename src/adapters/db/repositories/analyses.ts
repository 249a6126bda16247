/** Call analyses (decision 28), one row per call. Every query is filtered by company. */
import { and, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../database.ts';
import { callAnalyses, conversations, uploads, users } from '../schema.ts';
import type { CallRef } from './events.ts';

/** A call_analyses row. */
export type CallAnalysis = typeof callAnalyses.$inferSelect;

/** What a run of the analysis ends with. */
export interface AnalysisOutcome {
  status: 'ready' | 'failed';
  reason: string | null;
  figures: unknown;
  method: string | null;
}

/** Starts a run: the call's analysis becomes pending with this run, replacing whatever was there. */
export async function startAnalysisRun(
  db: Db,
  companyId: string,
  conversationUuid: string,
  run: { runId: string; source: 'recording' | 'transcript'; uploadId: number | null },
): Promise<void> {
  const values = { status: 'pending' as const, reason: null, figures: null, method: null, ...run };
  await db
    .insert(callAnalyses)
    .values({ companyId, conversationUuid, ...values })
    .onConflictDoUpdate({
      target: [callAnalyses.companyId, callAnalyses.conversationUuid],
      set: { ...values, updatedAt: new Date() },
    });
}

/**
 * Stores the outcome of a run, only if it is still the call's latest run; false when it is not. With
 * `event`, the event is written by the same statement when the run is stored (its transactional outbox).
 */
export async function finishAnalysisRun(
  db: Db,
  companyId: string,
  conversationUuid: string,
  runId: string,
  outcome: AnalysisOutcome,
  event?: { type: string; data: Record<string, unknown> },
): Promise<boolean> {
  const figures =
    outcome.figures === null || outcome.figures === undefined ? null : JSON.stringify(outcome.figures);
  const stored = sql`update ${callAnalyses} set status = ${outcome.status}, reason = ${outcome.reason},
      figures = ${figures}::jsonb, method = ${outcome.method}, updated_at = now()
    where company_id = ${companyId} and conversation_uuid = ${conversationUuid} and run_id = ${runId}
    returning company_id`;
  // Without an event, no insert at all: the events table's statement trigger would notify for nothing.
  const result = event
    ? await db.execute(sql`with stored as (${stored}),
        written as (insert into events (company_id, type, data)
          select company_id, ${event.type}::text, ${JSON.stringify(event.data)}::jsonb from stored)
        select count(*)::int as stored from stored`)
    : await db.execute(sql`with stored as (${stored}) select count(*)::int as stored from stored`);
  const [row] = (result as unknown as { rows: { stored: number }[] }).rows;
  return (row?.stored ?? 0) > 0;
}

/** What an analysis job reads of its call, in one statement: the run it is at, the call's ids and transcript. */
export interface AnalysisSubject {
  runId: string;
  ref: CallRef;
  transcript: unknown;
}

/** The call's analysis run with its call's ids and transcript, or undefined when the call has no analysis. */
export async function findAnalysisSubject(
  db: Db,
  companyId: string,
  conversationUuid: string,
): Promise<AnalysisSubject | undefined> {
  const [row] = await db
    .select({
      runId: callAnalyses.runId,
      conversationId: conversations.conversationId,
      email: users.email,
      transcript: conversations.transcript,
    })
    .from(callAnalyses)
    .innerJoin(
      conversations,
      and(
        eq(conversations.companyId, callAnalyses.companyId),
        eq(conversations.id, callAnalyses.conversationUuid),
      ),
    )
    .innerJoin(
      users,
      and(eq(users.companyId, conversations.companyId), eq(users.id, conversations.agentUserId)),
    )
    .where(and(eq(callAnalyses.companyId, companyId), eq(callAnalyses.conversationUuid, conversationUuid)));
  if (!row) return undefined;
  return {
    runId: row.runId,
    ref: { call_id: conversationUuid, conversation_id: row.conversationId, agent_email: row.email },
    transcript: row.transcript,
  };
}

/** The call's analysis row, or undefined. */
export async function findAnalysis(
  db: Db,
  companyId: string,
  conversationUuid: string,
): Promise<CallAnalysis | undefined> {
  const [row] = await db
    .select()
    .from(callAnalyses)
    .where(and(eq(callAnalyses.companyId, companyId), eq(callAnalyses.conversationUuid, conversationUuid)));
  return row;
}

/** The id of the call's latest ready upload, or undefined when it has none. */
export async function latestReadyUploadId(
  db: Db,
  companyId: string,
  conversationUuid: string,
): Promise<number | undefined> {
  const [row] = await db
    .select({ id: uploads.id })
    .from(uploads)
    .where(
      and(
        eq(uploads.companyId, companyId),
        eq(uploads.conversationUuid, conversationUuid),
        eq(uploads.status, 'ready'),
      ),
    )
    .orderBy(desc(uploads.updatedAt), desc(uploads.id))
    .limit(1);
  return row?.id;
}
