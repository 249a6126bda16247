/** The read side of calls: pages of the list followed by cursor, one call, a recording's URL, erasure. */
import { requestJson, type Transport } from './http.ts';
import type { CallItem, CallPage, ListCallsFilters } from './types.ts';

/** Options of listCalls. */
export interface ListCallsOptions {
  /** Calls per request, 1–1000 (default: the service's, 50). */
  pageSize?: number;
  signal?: AbortSignal;
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

/** Every call that matches, newest first, one page at a time: the next page is asked for only when needed. */
export async function* iterateCalls(
  transport: Transport,
  filters: ListCallsFilters,
  options: ListCallsOptions,
): AsyncGenerator<CallItem, void, undefined> {
  let cursor: string | null = null;
  do {
    const path = `/api/v1/calls${listQuery(filters, options.pageSize, cursor)}`;
    const page: CallPage = await requestJson(transport, 'GET', path, undefined, options.signal);
    yield* page.calls;
    cursor = page.next_cursor;
  } while (cursor !== null);
}

/** The path of one call. */
export function callPath(id: string, tail = ''): string {
  return `/api/v1/calls/${encodeURIComponent(id)}${tail}`;
}
