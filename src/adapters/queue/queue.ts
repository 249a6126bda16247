/**
 * A small job queue on the service's own database (the `jobs` table), because the well-kept queue
 * libraries (graphile-worker, pg-boss) do not run on PGlite. Jobs are claimed with
 * `FOR UPDATE SKIP LOCKED` under a lease: a job whose worker died is claimed again once its lease ends.
 * Each claim counts an attempt; failures are retried with exponential backoff up to `maxAttempts`, then
 * the job is kept, dead, with its last error. A job is deleted when done. Times come from the database's
 * clock, so several processes agree on them.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { prepared, rowsOf, runPrepared } from '../db/prepared.ts';
import { retentionCutoff } from '../db/repositories/events.ts';
import { jobs } from '../db/schema.ts';

/** A job to enqueue. */
export interface NewJob {
  kind: string;
  /** The company the job works for; omitted for service-wide work. */
  companyId?: string | null;
  payload?: Record<string, unknown>;
  /** While a job with this key is queued (or running), enqueueing the key again does nothing. */
  dedupeKey?: string;
  /**
   * With a dedupe key: when the key's job is running, it runs once more after it completes, instead of
   * the enqueue doing nothing; so work added while it ran (and missed by it) is not left waiting.
   */
  rerunIfRunning?: boolean;
  /** Run no earlier than this many seconds from now. */
  delaySeconds?: number;
  maxAttempts?: number;
}

/** A claimed job. `attempts` counts this attempt and is the claim's token. */
export interface Job {
  id: number;
  companyId: string | null;
  kind: string;
  payload: Record<string, unknown>;
  attempts: number;
  maxAttempts: number;
  lastError: string | null;
}

/** Which kinds of job a worker takes, so that one kind cannot take every slot from another. */
export interface KindFilter {
  only?: readonly string[];
  except?: readonly string[];
  /** Only jobs whose payload contains this (JSON containment: `{"uploadId": null}` takes those with a null uploadId). */
  payload?: Record<string, unknown>;
}

/** True when a worker of this filter takes jobs of `kind`. */
export function takesKind(filter: KindFilter, kind: string): boolean {
  if (filter.only && !filter.only.includes(kind)) return false;
  return !filter.except?.includes(kind);
}

/** What became of a failed job. */
export type FailOutcome = 'retry' | 'dead';

/** The queue's operations, plus an in-process wake-up for workers waiting on it. */
export interface JobQueue {
  /**
   * Adds a job (in `db`, which may be a transaction); false when its dedupe key is already queued, or
   * running and not flagged to run again (rerunIfRunning).
   */
  enqueue(db: Db, job: NewJob): Promise<boolean>;
  /**
   * Claims up to `limit` due jobs for `leaseSeconds` (the queue's default unless given), only of
   * `kinds.only` / not of `kinds.except`.
   */
  claim(limit: number, kinds?: KindFilter, leaseSeconds?: number): Promise<Job[]>;
  /**
   * Deletes a finished job, unless its lease was lost to another worker meanwhile; true when it was
   * queued again instead (its key was enqueued with rerunIfRunning while it ran): notify() its kind.
   */
  complete(job: Job): Promise<boolean>;
  /** Seconds a claim lasts when the claimer does not say. */
  readonly leaseSeconds: number;
  /**
   * Extends the lease of a job still claimed by this claim (by `leaseSeconds`, the queue's own by default);
   * false when the claim was lost (its lease ran out and another worker took the job).
   */
  renew(job: Job, leaseSeconds?: number): Promise<boolean>;
  /**
   * Records a failed attempt: the job runs again after a backoff (or at `retryAt`, when the work's own
   * server named a time, at most RETRY_AT_MAX_SECONDS away), or is dead after the last attempt or when
   * `permanent`.
   */
  fail(job: Job, error: unknown, options?: { permanent?: boolean; retryAt?: Date }): Promise<FailOutcome>;
  /**
   * Wakes this process's workers now (call after the transaction that enqueued commits): those that take
   * one of `kinds`, or every worker when the kinds are not given.
   */
  notify(kinds?: readonly string[]): void;
  /** Subscribes to notify() for the kinds a worker takes (all by default); returns the unsubscriber. */
  onNotify(listener: () => void, kinds?: KindFilter): () => void;
}

/** Tuning of the queue. */
export interface QueueOptions {
  /** How long a claim lasts before another worker may take the job. */
  leaseSeconds?: number;
  /** Seconds to wait before attempt `attempt + 1`. */
  backoffSeconds?: (attempt: number) => number;
}

/** Seconds a claim lasts unless the queue or the worker says otherwise (renewed while the job runs). */
const DEFAULT_LEASE_SECONDS = 300;

/** 2 s, 4 s, 8 s, … capped at 5 minutes. */
export function defaultBackoffSeconds(attempt: number): number {
  return Math.min(300, 2 ** Math.max(1, attempt));
}

const MAX_ERROR_LENGTH = 2000;

function errorText(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.slice(0, MAX_ERROR_LENGTH);
}

/**
 * The longest wait a failure's `retryAt` may ask for: a server's Retry-After is honoured (an engine's 429
 * asking for an hour used up five attempts in 38 s on the backoff), but each such wait still spends an
 * attempt, so a server that always asks again ends the job within five of them.
 */
export const RETRY_AT_MAX_SECONDS = 6 * 3600;

const secondsFromNow = (seconds: number) => sql`now() + make_interval(secs => ${seconds})`;

/**
 * Claims due jobs: the oldest first, skipping those another worker holds, and counts an attempt. A job
 * still holding a lease it never released lost its worker: it is taken even on its last attempt, so that
 * it is declared dead (and its dedupe key freed) instead of lingering. $3 / $4: JSON arrays of the kinds
 * taken only / not taken, or null; $5: what the payload must contain, or null.
 *
 * A dead job is due at infinity (`fail`), so the pick's range of `jobs_due_idx` never reaches one.
 *
 * The due jobs are picked in a MATERIALIZED CTE, evaluated once. As `where id in (select … limit $1 for
 * update skip locked)` the planner may run the pick again for each job row (a nested-loop semi-join, chosen
 * when `jobs` was last analysed nearly empty), and each run skips the rows the runs before it locked: a claim
 * of 1 took every due job, so the worker ran them all at once past WORKER_CONCURRENCY, and transcripts'
 * analyses were no longer batched (one claim, read and write per call/create instead of per fifty).
 */
export const CLAIM = prepared(
  'jobs_claim',
  `with due as materialized (
     select id from jobs
     where run_at <= now() and (locked_until is null or locked_until < now())
       and (attempts < max_attempts or locked_until is not null)
       and ($3::jsonb is null or jsonb_exists($3::jsonb, kind))
       and ($4::jsonb is null or not jsonb_exists($4::jsonb, kind))
       and ($5::jsonb is null or payload @> $5::jsonb)
     order by run_at, id
     limit $1::int
     for update skip locked)
   update jobs j set locked_until = now() + make_interval(secs => $2::double precision), attempts = j.attempts + 1
   from due where j.id = due.id
   returning j.id, j.company_id, j.kind, j.payload, j.attempts, j.max_attempts, j.last_error`,
);

/**
 * The delete of a finished job whose claim is still its own: `$id` its id, `$attempts` the claim's attempt
 * (statements that finish a job's work and the job at once use it, see `JOB_COMPLETED`).
 */
export function deleteFinishedJob(idParam: number, attemptsParam: number): string {
  return `delete from jobs where id = $${idParam}::bigint and attempts = $${attemptsParam}::int`;
}

/** What a claimed job is to a statement that completes it along with its work. */
export type ClaimedJob = Pick<Job, 'id' | 'attempts'>;

/**
 * Deletes a finished job, unless its lease was lost to another worker meanwhile ($2: the claim's attempt),
 * and queues it again as a new job when it was asked to run once more. One statement: an enqueue that
 * flags the job holds its row until it commits, so the delete waits for it and sees the flag.
 */
const COMPLETE = prepared(
  'jobs_complete',
  `with done as (${deleteFinishedJob(1, 2)} returning company_id, kind, payload, dedupe_key, max_attempts, rerun)
   insert into jobs (company_id, kind, payload, dedupe_key, max_attempts)
   select company_id, kind, payload, dedupe_key, max_attempts from done where rerun
   returning id`,
);

/** Makes the queue over `db`. */
export function createJobQueue(db: Db, options: QueueOptions = {}): JobQueue {
  const leaseSeconds = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
  const backoff = options.backoffSeconds ?? defaultBackoffSeconds;
  const listeners = new Set<{ wake: () => void; kinds: KindFilter }>();
  const mine = (job: Job) => and(eq(jobs.id, job.id), eq(jobs.attempts, job.attempts));

  return {
    leaseSeconds,
    async enqueue(tx, job) {
      const insert = tx.insert(jobs).values({
        kind: job.kind,
        companyId: job.companyId ?? null,
        payload: job.payload ?? {},
        dedupeKey: job.dedupeKey ?? null,
        maxAttempts: job.maxAttempts ?? 5,
        ...(job.delaySeconds ? { runAt: secondsFromNow(job.delaySeconds) } : {}),
      });
      const rows = await (job.rerunIfRunning
        ? // Only a running (claimed) job is flagged: a queued one will find the new work when it runs.
          insert.onConflictDoUpdate({
            target: jobs.dedupeKey,
            set: { rerun: true },
            setWhere: sql`${jobs.lockedUntil} is not null`,
          })
        : insert.onConflictDoNothing({ target: jobs.dedupeKey })
      ).returning({ id: jobs.id });
      return rows.length > 0;
    },

    async claim(limit, kinds = {}, lease = leaseSeconds) {
      const rows = await runPrepared(db, CLAIM, [
        limit,
        lease,
        kinds.only ? JSON.stringify(kinds.only) : null,
        kinds.except?.length ? JSON.stringify(kinds.except) : null,
        kinds.payload ? JSON.stringify(kinds.payload) : null,
      ]);
      return rows
        .map((r) => ({
          id: Number(r.id),
          companyId: (r.company_id as string | null) ?? null,
          kind: String(r.kind),
          payload: (r.payload ?? {}) as Record<string, unknown>,
          attempts: Number(r.attempts),
          maxAttempts: Number(r.max_attempts),
          lastError: (r.last_error as string | null) ?? null,
        }))
        .sort((a, b) => a.id - b.id);
    },

    async complete(job) {
      return (await runPrepared(db, COMPLETE, [job.id, job.attempts])).length > 0;
    },

    async renew(job, lease = leaseSeconds) {
      const rows = await db
        .update(jobs)
        .set({ lockedUntil: secondsFromNow(lease) })
        .where(and(mine(job), sql`${jobs.lockedUntil} is not null`))
        .returning({ id: jobs.id });
      return rows.length > 0;
    },

    async fail(job, error, failOptions = {}) {
      const dead = failOptions.permanent === true || job.attempts >= job.maxAttempts;
      if (dead) {
        // Kept for an operator to read, but no longer claimable, and its key is free for new work. Due at
        // infinity, past the end of every claim's range of `jobs_due_idx`: left at its last run time, each
        // dead job was an index entry every claim walked and filtered out (110,000 of them made an empty
        // claim 21 ms on PostgreSQL and 30 ms of the event loop on PGlite, against 0.3 and 1.6).
        await db
          .update(jobs)
          .set({
            lockedUntil: null,
            lastError: errorText(error),
            dedupeKey: null,
            attempts: sql`greatest(${jobs.attempts}, ${jobs.maxAttempts})`,
            runAt: sql`'infinity'`,
          })
          .where(mine(job));
        return 'dead';
      }
      const wait = backoff(job.attempts);
      const asked = failOptions.retryAt ? (failOptions.retryAt.getTime() - Date.now()) / 1000 : 0;
      await db
        .update(jobs)
        .set({
          lockedUntil: null,
          lastError: errorText(error),
          runAt: secondsFromNow(Math.max(wait, Math.min(asked, RETRY_AT_MAX_SECONDS))),
        })
        .where(mine(job));
      return 'retry';
    },

    notify(kinds) {
      // A wake-up costs the worker a claim query: a worker that takes none of these kinds sleeps on.
      for (const listener of listeners) {
        if (!kinds || kinds.some((kind) => takesKind(listener.kinds, kind))) listener.wake();
      }
    },

    onNotify(wake, kinds = {}) {
      const listener = { wake, kinds };
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** A dead job: its attempts spent and no lease (whatever `fail` or a lost last attempt made it). */
const DEAD = sql`(${jobs.attempts} >= ${jobs.maxAttempts} and ${jobs.lockedUntil} is null)`;

/**
 * Jobs per kind, service-wide, for the metrics: live (queued or running) and dead, and how long the oldest
 * live one has been due (since it was queued or, if later, since its time came). A job queued to run later
 * (an erased call's second deletion, 70 minutes on) is not waiting until then: counted from its creation,
 * a healthy queue showed an age growing for an hour.
 */
export async function queueDepth(
  db: Db,
): Promise<{ kind: string; live: number; dead: number; oldestAgeSeconds: number }[]> {
  const rows = await db
    .select({
      kind: jobs.kind,
      live: sql<number>`(count(*) filter (where not ${DEAD}))::int`,
      dead: sql<number>`(count(*) filter (where ${DEAD}))::int`,
      oldest: sql<number>`coalesce(extract(epoch from now() - min(greatest(${jobs.createdAt}, ${jobs.runAt})) filter (where not ${DEAD} and ${jobs.runAt} <= now())), 0)::float8`,
    })
    .from(jobs)
    .groupBy(jobs.kind);
  return rows.map((r) => ({ kind: r.kind, live: r.live, dead: r.dead, oldestAgeSeconds: Number(r.oldest) }));
}

/**
 * Deletes up to `limit` dead jobs queued more than `retentionDays` ago; returns how many. Service-wide: the
 * worker's hourly purge. Dead jobs are kept for an operator to read their last error, but not for ever:
 * their payloads name calls, erased ones too. All sit at infinity in `jobs_due_idx`, so the scan is theirs.
 */
export async function purgeDeadJobs(db: Db, retentionDays: number, limit: number): Promise<number> {
  const result = await db.execute(sql`
    with deleted as (
      delete from jobs where id in (
        select id from jobs
        where ${jobs.runAt} = 'infinity' and ${DEAD}
          and ${jobs.createdAt} < ${retentionCutoff(retentionDays)}
        limit ${limit})
      returning 1
    )
    select count(*)::int as n from deleted`);
  return rowsOf<{ n: number }>(result)[0]?.n ?? 0;
}
