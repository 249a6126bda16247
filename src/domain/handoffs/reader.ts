/**
 * Reading handoff records (spec 4.5), cheaply: a final record never changes, so it is answered from a
 * bounded in-memory cache without a query; a partial one is too, until a change of it is heard (see
 * `final-cache.ts`); a partial one can be long-polled (`wait`), which parks the request on a shared watch
 * until the record changes, becomes final, or the wait is over.
 */
import type { Db } from '../../adapters/db/database.ts';
import { findHandoff, type HandoffRow } from '../../adapters/db/repositories/call-handoffs.ts';
import type { Principal } from '../access/principal.ts';
import { NotFoundError } from '../errors.ts';
import type { FinalRecordCache } from './final-cache.ts';
import { type Handoff, toHandoff } from './records.ts';
import type { HandoffWatcher } from './watch.ts';

/** How to read. */
export interface ReadOptions {
  /** Milliseconds to wait for a change of a partial record; 0 answers at once. */
  waitMs: number;
  /**
   * The versions the client has (from If-None-Match, which may name several). A wait answers at once when
   * the record is at none of them, and otherwise waits for a change; without them, it waits for a change
   * of the version it finds.
   */
  knownVersions?: readonly number[] | undefined;
  /** Aborted when the client goes away: stop waiting. */
  signal?: AbortSignal | undefined;
}

/** The reader of one process. */
export interface HandoffReader {
  /** The record, after waiting as asked; NotFoundError for an unknown id or another company's. */
  read(principal: Principal, id: string, options: ReadOptions): Promise<Handoff>;
  /**
   * The record when memory has the answer `read` would give at once: a final record, or a partial one
   * when the read does not wait; otherwise undefined (then call `read`). No promise: most polls end here.
   */
  readNow(principal: Principal, id: string, waitMs: number): Handoff | undefined;
  /** Ends every wait now (each answers with what it has), for a quick shutdown. */
  close(): void;
}

/** Makes the reader; `cache` holds final records by company and id. */
export function createHandoffReader(deps: {
  db: Db;
  watcher: HandoffWatcher;
  cache: FinalRecordCache;
}): HandoffReader {
  const { db, watcher, cache } = deps;
  // A set of callbacks rather than an AbortSignal: thousands of waiters would trip Node's listener warning.
  const enders = new Set<() => void>();
  let closed = false;

  function found(row: HandoffRow | undefined, id: string): Handoff {
    if (!row) throw new NotFoundError(`call handoff record ${id} not found`);
    return toHandoff(row);
  }

  /**
   * Reads the record, and caches it when final: final records never change, and the cache forgets one
   * that is erased. (Records a watch hands over are not cached: their read began before the cache knew.)
   */
  async function readRow(companyId: string, id: string): Promise<HandoffRow | undefined> {
    const key = `${companyId}:${id}`;
    const keep = cache.beginRead(key);
    const keepPartial = cache.beginPartialRead(key);
    let row: HandoffRow | undefined;
    try {
      row = await findHandoff(db, companyId, id);
    } finally {
      const handoff = row ? toHandoff(row) : undefined;
      keep(handoff?.view.final ? handoff : undefined);
      keepPartial(handoff && !handoff.view.final ? handoff : undefined);
    }
    return row;
  }

  async function waitForChange(companyId: string, id: string, options: ReadOptions): Promise<Handoff> {
    let seen: HandoffRow | undefined;
    let early: HandoffRow | undefined | null = null;
    let settle: ((row: HandoffRow | undefined) => void) | undefined;
    const changed = new Promise<HandoffRow | undefined>((resolve) => {
      settle = resolve;
    });
    // Subscribed before the first read, so no change between that read and the wait can be missed.
    const stop = await watcher.watch(companyId, id, (row) => {
      if (!seen) {
        early = row;
        return;
      }
      if (!row || row.final || row.version > seen.version) settle?.(row);
    });
    let timer: NodeJS.Timeout | undefined;
    let end: (() => void) | undefined;
    const ended = new Promise<'ended'>((resolve) => {
      end = () => resolve('ended');
    });
    const onEnd = () => end?.();
    options.signal?.addEventListener('abort', onEnd, { once: true });
    enders.add(onEnd);
    if (closed || options.signal?.aborted) onEnd();
    try {
      const first = await readRow(companyId, id);
      if (!first || first.final) return found(first, id);
      // Any version the client names that is current is a copy it holds: a list naming the current one and a
      // newer one answered 304 at once, and a looping poller spun.
      if (options.knownVersions?.length && !options.knownVersions.includes(first.version))
        return found(first, id);
      seen = first;
      const pending = early as HandoffRow | undefined | null;
      if (pending !== null && (!pending || pending.final || pending.version > first.version)) {
        return found(pending, id);
      }
      const outcome = await Promise.race([
        changed.then((row) => ({ row })),
        new Promise<'deadline'>((resolve) => {
          timer = setTimeout(() => resolve('deadline'), options.waitMs);
        }),
        ended,
      ]);
      if (typeof outcome === 'object') return found(outcome.row, id);
      if (outcome === 'ended') return found(seen, id);
      // One read at the deadline, so that even a lost notification costs at most one wait.
      return found(await readRow(companyId, id), id);
    } finally {
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener('abort', onEnd);
      enders.delete(onEnd);
      stop();
    }
  }

  function readNow(principal: Principal, rawId: string, waitMs: number): Handoff | undefined {
    const key = `${principal.companyId}:${rawId.toLowerCase()}`;
    return cache.get(key) ?? (waitMs <= 0 || closed ? cache.getPartial(key) : undefined);
  }

  return {
    readNow,
    async read(principal, rawId, options) {
      const now = readNow(principal, rawId, options.waitMs);
      if (now) return now;
      const id = rawId.toLowerCase();
      if (options.waitMs <= 0 || closed) return found(await readRow(principal.companyId, id), id);
      return waitForChange(principal.companyId, id, options);
    },
    close() {
      closed = true;
      for (const onEnd of [...enders]) onEnd();
    },
  };
}
