/** One JSON request to the service with the key, mapping error answers to CqsError. */
import { CqsError } from './errors.ts';

/** Sends one PUT of a recording; answers the status and body text. */
export type PutFunction = (
  url: string,
  init: {
    headers: Record<string, string>;
    body: ReadableStream<Uint8Array> | Uint8Array | Blob;
    signal?: AbortSignal;
  },
) => Promise<{ status: number; text: string }>;

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
  const parsed = await readBody(res);
  if (!res.ok) throw new CqsError(res.status, parsed, `${method} ${path}`);
  return parsed as T;
}

/** The JSON body of an answer, or its text when it is not JSON. */
export async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return { error: text.slice(0, 500) };
  }
}
