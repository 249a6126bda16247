/**
 * The app's one way to the API: same origin, the key from this tab's session storage as a Bearer header
 * (never in a URL), typed by the OpenAPI document's generated types (the ones @cqs/client is built on).
 */
import type { operations } from '../../client/src/generated/openapi.ts';

type Json<Op extends keyof operations, Status extends number> =
  operations[Op]['responses'] extends Record<Status, { content: { 'application/json': infer Body } }>
    ? Body
    : never;

/** One page of GET /api/v1/calls. */
export type CallPage = Json<'listCalls', 200>;
/** A call as the list shows it. */
export type CallItem = CallPage['calls'][number];
/** GET /api/v1/calls/{id}. */
export type CallDetail = Json<'getCall', 200>;
/** A tag in the request's form. */
export type Tag = CallItem['tags'][number];
/** The recording's signed URL (GET …/recording?redirect=false). */
export type RecordingLink = Json<'getCallRecording', 200>;
/** The list's filters, as the query string carries them. */
export type CallFilters = NonNullable<operations['listCalls']['parameters']['query']>;

const KEY_ITEM = 'cqs.apiKey';

/** The key this tab signed in with, if any. */
export function storedKey(): string | null {
  return sessionStorage.getItem(KEY_ITEM);
}

const TAG_ITEM = 'cqs.canTag';

/** Keeps the key and what it may do for this tab only (session storage: gone when the tab closes). */
export function storeKey(key: string, abilities: KeyAbilities): void {
  sessionStorage.setItem(KEY_ITEM, key);
  sessionStorage.setItem(TAG_ITEM, abilities.tag ? 'yes' : 'no');
}

/** Whether the stored key may tag calls. */
export function canTag(): boolean {
  return sessionStorage.getItem(TAG_ITEM) === 'yes';
}

/** The query of the calls list last shown (the call page's link back to it). */
export const LAST_LIST_ITEM = 'cqs.lastList';

/** Forgets the key, and the list last shown with it (its filters may name an agent). */
export function forgetKey(): void {
  sessionStorage.removeItem(KEY_ITEM);
  sessionStorage.removeItem(TAG_ITEM);
  sessionStorage.removeItem(LAST_LIST_ITEM);
}

/** An error answer of the API. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Seconds the answer asked to wait before trying again (its Retry-After), 0 when none. */
    readonly retryAfter = 0,
  ) {
    super(message);
  }
}

/** A Retry-After header's wait in seconds (delay-seconds or an HTTP date), 0 when none. */
function retryAfterOf(header: string | null): number {
  if (!header) return 0;
  const seconds = /^\d+$/.test(header) ? Number(header) : (Date.parse(header) - Date.now()) / 1000;
  return Number.isFinite(seconds) ? Math.max(0, seconds) : 0;
}

async function request<T>(method: string, path: string, body?: unknown, key = storedKey()): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  const json = text ? (JSON.parse(text) as unknown) : undefined;
  if (!res.ok) {
    const error = (json as { error?: string } | undefined)?.error ?? res.statusText;
    throw new ApiError(res.status, error, retryAfterOf(res.headers.get('retry-after')));
  }
  return json as T;
}

/** The query string of a list request (tag repeated). */
export function listQuery(filters: CallFilters, cursor?: string | null): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) {
    if (value === undefined || value === '') continue;
    for (const v of [value].flat()) params.append(name, String(v));
  }
  if (cursor) params.set('cursor', cursor);
  return params.toString();
}

/** One page of calls. */
export function listCalls(filters: CallFilters, cursor?: string | null): Promise<CallPage> {
  const query = listQuery(filters, cursor);
  return request('GET', `/api/v1/calls${query ? `?${query}` : ''}`);
}

/** One call, with everything about it. */
export function getCall(id: string): Promise<CallDetail> {
  return request('GET', `/api/v1/calls/${encodeURIComponent(id)}`);
}

/** The signed URL of the call's recording, or null when it has no ready one. */
export async function recordingLink(id: string): Promise<RecordingLink | null> {
  try {
    return await request('GET', `/api/v1/calls/${encodeURIComponent(id)}/recording?redirect=false`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

/**
 * Adds (or replaces) tags of the call on screen, named by its id (a key with `calls`). call/add_tags names
 * it by agent email and conversation_id, which found another call, or none, once its agent was deactivated.
 */
export function addTags(call: CallDetail, tags: Tag[]): Promise<{ success: boolean }> {
  return request('POST', `/api/v1/calls/${encodeURIComponent(call.id)}/tags`, { tags });
}

/** What a key may do here: read calls (`calls:read`), and tag them (`calls`). */
export interface KeyAbilities {
  read: boolean;
  tag: boolean;
}

/**
 * Checks a key before keeping it: a one-item list needs `calls:read`; the product list (a read that
 * changes nothing) answers 200 only to a key with `calls`, the scope call/add_tags needs.
 */
export async function checkKey(key: string): Promise<KeyAbilities> {
  await request('GET', '/api/v1/calls?limit=1', undefined, key);
  try {
    await request('GET', '/api/v1/product/list', undefined, key);
    return { read: true, tag: true };
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) return { read: true, tag: false };
    throw error;
  }
}
