/** The read side of calls: pages of the list followed by cursor, one call, a recording's URL, erasure. */
import { type RetryOptions, withRetries } from './backoff.ts';
import { requestJson, type Transport } from './http.ts';
import type { CallItem, CallPage, ListCallsFilters } from './types.ts';

/** Consecutive transient failures of one page's request that listCalls retries before it throws. */
export const LIST_CALLS_MAX_RETRIES = 5;

/** Options of listCalls and listCallPages. */
export interface ListCallsOptions extends RetryOptions {
  /** Calls per request, 1–1000 (default: the service's, 50). */
  pageSize?: number;
  /**
   * Start after this cursor: a page's `next_cursor` from listCallPages, to resume a listing that stopped
   * (with the same filters). Default: from the newest call.
   */
  cursor?: string;
  /**
   * Transient failures (a network error, 429 or 5xx) of one page's request retried in a row, each after the
   * longer of `Retry-After` and a back-off (default 5); then the error is thrown.
   */
  maxRetries?: number;
}

/** The query string of a list request: the filters (a repeated `tag` per value), the page size and cursor. */
export function listQuery(
  filters: ListCallsFilters,
  pageSize: number | undefined,
  cursor: string | null,
): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) {
    if (value === undefined || value === null) continue;
    for (const one of Array.isArray(value) ? value : [value]) query.append(name, String(one));
  }
  if (pageSize !== undefined) query.set('limit', String(pageSize));
  if (cursor !== null) query.set('cursor', cursor);
  const text = query.toString();
  return text ? `?${text}` : '';
}

/**
 * Every page of calls that match, newest first, as the service answers them (`calls` and `next_cursor`,
 * null on the last page): the next page is asked for only when needed. A transient failure is retried.
 */
export async function* iterateCallPages(
  transport: Transport,
  filters: ListCallsFilters,
  options: ListCallsOptions,
): AsyncGenerator<CallPage, void, undefined> {
  let cursor: string | null = options.cursor ?? null;
  do {
    const path = `/api/v1/calls${listQuery(filters, options.pageSize, cursor)}`;
    const page: CallPage = await withRetries(
      () => requestJson(transport, 'GET', path, undefined, options.signal),
      options,
      LIST_CALLS_MAX_RETRIES,
    );
    yield page;
    cursor = page.next_cursor;
  } while (cursor !== null);
}

/** Every call that matches, newest first, one page at a time: the next page is asked for only when needed. */
export async function* iterateCalls(
  transport: Transport,
  filters: ListCallsFilters,
  options: ListCallsOptions,
): AsyncGenerator<CallItem, void, undefined> {
  for await (const page of iterateCallPages(transport, filters, options)) yield* page.calls;
}

/** The path of one call. */
export function callPath(id: string, tail = ''): string {
  return `/api/v1/calls/${encodeURIComponent(id)}${tail}`;
}
