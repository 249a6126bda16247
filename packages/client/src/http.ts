/** One JSON request to the service with the key, mapping error answers to CqsError. */
import { retryAfterMs } from './backoff.ts';
import { CqsError } from './errors.ts';

/** Sends one PUT of a recording; answers the status and body text (and, optionally, the headers). */
export type PutFunction = (
  url: string,
  init: {
    headers: Record<string, string>;
    body: ReadableStream<Uint8Array> | Uint8Array | Blob;
    signal?: AbortSignal;
  },
) => Promise<{
  status: number;
  text: string;
  /** The answer's headers, names in lower case; `retry-after` is honoured when the PUT is retried. */
  headers?: Record<string, string | string[] | undefined>;
}>;

/** What every request needs: where, who, and which fetch. */
export interface Transport {
  baseUrl: string;
  apiKey: string;
  fetch: typeof fetch;
  /** How recordings are PUT (default: through `fetch`). */
  put?: PutFunction;
}

/** Sends a request with the Bearer key; returns the parsed JSON of a 2xx, throws CqsError otherwise. */
export async function requestJson<T>(
  transport: Transport,
  method: string,
  path: string,
  body?: unknown,
  signal?: AbortSignal,
): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${transport.apiKey}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const init: RequestInit = { method, headers };
  if (body !== undefined) init.body = JSON.stringify(body);
  if (signal) init.signal = signal;
  const res = await transport.fetch(`${transport.baseUrl}${path}`, init);
  if (!res.ok) throw await errorOf(res, `${method} ${path}`);
  return (await readSuccess(res, `${method} ${path}`)) as T;
}

/** The CqsError of an error answer: its status, its body's `error`, its Retry-After. */
export async function errorOf(res: Response, context: string): Promise<CqsError> {
  return new CqsError(res.status, await readBody(res), context, {
    retryAfterMs: retryAfterMs(res.headers.get('retry-after')),
  });
}

/**
 * The body of a 2xx answer: undefined for a 204, else JSON. Anything else (another type, such as a proxy's
 * or a web app's HTML page behind a wrong baseUrl, an empty body, JSON that does not parse) is a CqsError
 * that names the status and the type, instead of a value of the wrong shape returned as a success.
 */
export async function readSuccess(res: Response, context: string): Promise<unknown> {
  if (res.status === 204) {
    await res.body?.cancel();
    return undefined;
  }
  const type = res.headers.get('content-type');
  const text = await res.text();
  const excerpt = text.trim().slice(0, 100);
  const refuse = (got: string) =>
    new CqsError(res.status, { error: `expected a JSON answer, got ${got}` }, context);
  if (!isJsonType(type)) {
    throw refuse(`${type ?? 'no Content-Type'}${excerpt ? `: ${excerpt}` : ' with an empty body'}`);
  }
  if (!text) throw refuse(`an empty body (${type})`);
  try {
    return JSON.parse(text);
  } catch {
    throw refuse(`${type} that does not parse: ${excerpt}`);
  }
}

/** application/json, or a `+json` type, with any parameters. */
function isJsonType(type: string | null): boolean {
  const essence = type?.split(';')[0]?.trim().toLowerCase() ?? '';
  return essence === 'application/json' || /^application\/[\w.-]+\+json$/.test(essence);
}

/** The JSON body of an error answer, or its text when it is not JSON. */
export async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return { error: text.slice(0, 500) };
  }
}
