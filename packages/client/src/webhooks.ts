/**
 * Verifying webhook deliveries (Standard Webhooks): the signature is HMAC-SHA256 of `id.timestamp.body`
 * keyed with the secret's bytes. Web Crypto's `verify` compares in constant time, and works in Node and
 * browsers alike.
 */
import type { CqsEvent } from './types.ts';

/** A delivery whose signature or timestamp does not check out. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

/** Options of verifyWebhook. */
export interface VerifyWebhookOptions {
  /** Seconds a delivery's timestamp may differ from now (replays are refused); default 300. */
  toleranceSeconds?: number;
  /** The clock, in milliseconds (tests). */
  now?: number;
}

/**
 * A header's value, its name in any case: a Headers object ignores case itself; a plain object (Node's
 * IncomingMessage has lower-case names, an AWS Lambda event or a framework may keep the sender's) is
 * searched without regard to case.
 */
function header(headers: Headers | Record<string, string | string[] | undefined>, name: string): string {
  let value: string | string[] | null | undefined;
  if (headers instanceof Headers) value = headers.get(name);
  else {
    value = headers[name];
    if (value === undefined) {
      const wanted = name.toLowerCase();
      const key = Object.keys(headers).find((k) => k.toLowerCase() === wanted);
      value = key === undefined ? undefined : headers[key];
    }
  }
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) throw new WebhookVerificationError(`missing ${name} header`);
  return text;
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * Checks a delivery: the body exactly as received (text), its headers, and the endpoint's `whsec_` secret.
 * Returns the event, or throws WebhookVerificationError.
 */
export async function verifyWebhook(
  body: string,
  headers: Headers | Record<string, string | string[] | undefined>,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<CqsEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('invalid webhook-timestamp');
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) {
    throw new WebhookVerificationError('webhook-timestamp is too far from now');
  }
  let keyBytes: Uint8Array<ArrayBuffer>;
  try {
    keyBytes = fromBase64(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  } catch {
    throw new WebhookVerificationError('the secret is not base64');
  }
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'verify',
  ]);
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${body}`);
  for (const candidate of signatures.split(' ')) {
    const [version, value] = candidate.split(',', 2);
    if (version !== 'v1' || !value) continue;
    let mac: Uint8Array<ArrayBuffer>;
    try {
      mac = fromBase64(value);
    } catch {
      continue;
    }
    if (await crypto.subtle.verify('HMAC', key, mac, signed)) return JSON.parse(body) as CqsEvent;
  }
  throw new WebhookVerificationError('no matching signature');
}
