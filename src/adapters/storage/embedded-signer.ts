/**
 * Signed upload URLs of the embedded storage: an HMAC-SHA256 over the method, the object key, the expiry
 * and the pinned Content-Type. The one place that makes and checks these signatures.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The path prefix under which the service serves upload URLs. */
export const UPLOAD_PATH_PREFIX = '/storage/v1/object/';

/** The query parameters of a signed URL. */
export const SIGNED_PARAMS = {
  expires: 'X-Cqs-Expires',
  contentType: 'X-Cqs-Content-Type',
  signature: 'X-Cqs-Signature',
} as const;

function sign(
  secret: string,
  method: string,
  objectKey: string,
  expires: number,
  contentType: string,
): string {
  return createHmac('sha256', secret)
    .update(`${method}\n${objectKey}\n${expires}\n${contentType}`)
    .digest('hex');
}

/** Encodes an object key for a URL path, keeping its slashes. */
export function encodeObjectKey(objectKey: string): string {
  return objectKey.split('/').map(encodeURIComponent).join('/');
}

/** Builds the signed PUT URL of an object. `expires` is in seconds since the epoch. */
export function signedPutUrl(
  baseUrl: string,
  secret: string,
  objectKey: string,
  contentType: string,
  expires: number,
): string {
  const query = new URLSearchParams({
    [SIGNED_PARAMS.expires]: String(expires),
    [SIGNED_PARAMS.contentType]: contentType,
    [SIGNED_PARAMS.signature]: sign(secret, 'PUT', objectKey, expires, contentType),
  });
  return `${baseUrl}${UPLOAD_PATH_PREFIX}${encodeObjectKey(objectKey)}?${query}`;
}

/** True when `signature` is the signature of the method, key, expiry and Content-Type. */
export function verifySignature(
  secret: string,
  method: string,
  objectKey: string,
  expires: number,
  contentType: string,
  signature: string,
): boolean {
  const expected = Buffer.from(sign(secret, method, objectKey, expires, contentType), 'hex');
  const given = Buffer.from(signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
