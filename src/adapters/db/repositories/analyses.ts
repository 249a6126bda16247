/** Call analyses (decision 28), one row per call. Every query is filtered by company. */
import { and, desc, eq } from 'drizzle-orm';
import type { Db } from '../database.ts';
import { callAnalyses, uploads } from '../schema.ts';

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

/** Stores the outcome of a run, only if it is still the call's latest run; false when it is not. */
export async function finishAnalysisRun(
  db: Db,
  companyId: string,
  conversationUuid: string,
  runId: string,
  outcome: AnalysisOutcome,
): Promise<boolean> {
  const rows = await db
    .update(callAnalyses)
    .set({ ...outcome, updatedAt: new Date() })
    .where(
      and(
        eq(callAnalyses.companyId, companyId),
        eq(callAnalyses.conversationUuid, conversationUuid),
        eq(callAnalyses.runId, runId),
      ),
    )
    .returning({ runId: callAnalyses.runId });
  return rows.length > 0;
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
