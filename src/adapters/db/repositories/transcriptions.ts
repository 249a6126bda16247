/** Call transcriptions (decision 29), one row per call, and the conditional write of their transcript. */
import { and, eq, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../database.ts';
import { callTranscriptions, conversations } from '../schema.ts';
import { transcriptJsonText } from '../transcript-text.ts';

/** A call_transcriptions row. */
export type CallTranscription = typeof callTranscriptions.$inferSelect;

/** Starts a run: the call's transcription becomes pending with this run, replacing whatever was there. */
export async function startTranscriptionRun(
  db: Db,
  companyId: string,
  conversationUuid: string,
  run: { runId: string; uploadId: number },
): Promise<void> {
  const values = { status: 'pending' as const, reason: null, engine: null, ...run };
  await db
    .insert(callTranscriptions)
    .values({ companyId, conversationUuid, ...values })
    .onConflictDoUpdate({
      target: [callTranscriptions.companyId, callTranscriptions.conversationUuid],
      set: { ...values, updatedAt: new Date() },
    });
}

/** Stores how a run ended, only while it is the call's latest run and pending (a run ends once); else false. */
export async function finishTranscriptionRun(
  db: Db,
  companyId: string,
  conversationUuid: string,
  runId: string,
  outcome: { status: 'ready' | 'failed'; reason: string | null; engine: string | null },
): Promise<boolean> {
  const rows = await db
    .update(callTranscriptions)
    .set({ ...outcome, updatedAt: new Date() })
    .where(
      and(
        eq(callTranscriptions.companyId, companyId),
        eq(callTranscriptions.conversationUuid, conversationUuid),
        eq(callTranscriptions.runId, runId),
        eq(callTranscriptions.status, 'pending'),
      ),
    )
    .returning({ runId: callTranscriptions.runId });
  return rows.length > 0;
}

/** The call's transcription row, or undefined; with `lock`, locked until the transaction ends. */
export async function findTranscription(
  db: Db,
  companyId: string,
  conversationUuid: string,
  lock = false,
): Promise<CallTranscription | undefined> {
  const query = db
    .select()
    .from(callTranscriptions)
    .where(
      and(
        eq(callTranscriptions.companyId, companyId),
        eq(callTranscriptions.conversationUuid, conversationUuid),
      ),
    );
  const [row] = lock ? await query.for('update') : await query;
  return row;
}

/** A transcript the client sent: any transcript not made by transcription (null source: sent before it existed). */
const hasClientTranscript = sql`(${conversations.transcript} is not null and ${conversations.transcriptSource} is distinct from 'transcription')`;

/** Whether the call has a transcript its client sent. */
export async function callHasClientTranscript(
  db: Db,
  companyId: string,
  conversationUuid: string,
): Promise<boolean> {
  const [row] = await db
    .select({ client: sql<boolean>`${hasClientTranscript}` })
    .from(conversations)
    .where(and(eq(conversations.companyId, companyId), eq(conversations.id, conversationUuid)));
  return row?.client === true;
}

/**
 * Stores a transcription's segments as the call's transcript, unless the call has a client's transcript:
 * one conditional statement, so a client's transcript committed at any moment is never overwritten.
 * Returns whether it was stored.
 */
export async function storeTranscribedTranscript(
  db: Db,
  companyId: string,
  conversationUuid: string,
  segments: unknown[],
): Promise<boolean> {
  const rows = await db
    .update(conversations)
    .set({
      transcript: sql`${transcriptJsonText(segments)}::json`,
      transcriptSource: 'transcription',
      updatedAt: sql`now()`,
    })
    .where(
      and(
        eq(conversations.companyId, companyId),
        eq(conversations.id, conversationUuid),
        or(isNull(conversations.transcript), eq(conversations.transcriptSource, 'transcription')),
      ),
    )
    .returning({ id: conversations.id });
  return rows.length > 0;
}
