/**
 * Signed URLs of the embedded storage: an HMAC-SHA256 over the method, the object key, the expiry and the
 * Content-Type. A PUT URL pins the Content-Type the upload must be sent with; a GET URL names the one it is
 * served with (and serves HEAD too, as the same read). The one place that makes and checks these signatures.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The path prefix under which the service serves its signed URLs (uploads and reads). */
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

function signedUrl(
  method: 'PUT' | 'GET',
  baseUrl: string,
  secret: string,
  objectKey: string,
  contentType: string,
  expires: number,
): string {
  const query = new URLSearchParams({
    [SIGNED_PARAMS.expires]: String(expires),
    [SIGNED_PARAMS.contentType]: contentType,
    [SIGNED_PARAMS.signature]: sign(secret, method, objectKey, expires, contentType),
  });
  return `${baseUrl}${UPLOAD_PATH_PREFIX}${encodeObjectKey(objectKey)}?${query}`;
}

/** Builds the signed PUT URL of an object. `expires` is in seconds since the epoch. */
export const signedPutUrl = signedUrl.bind(null, 'PUT');

/** Builds the signed GET (and HEAD) URL of an object served as `contentType`. */
export const signedGetUrl = signedUrl.bind(null, 'GET');

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

/** Why a request to a signed URL is refused, in S3's terms; `ok` when it may proceed. */
export type SignedRequestCheck =
  | { ok: true; expires: number; contentType: string }
  | { ok: false; problem: 'missing' | 'mismatch' }
  | { ok: false; problem: 'content-type'; expected: string; sent: string | undefined }
  | { ok: false; problem: 'expired'; expires: number };

/**
 * Checks a request against its signed URL, as S3 checks a presigned one: every query parameter must be
 * one we signed (an added or repeated one is tampering), the signature must cover this method (HEAD is
 * checked as GET), key, expiry and the URL's Content-Type, a PUT's Content-Type must be exactly that one,
 * and the URL must not have expired. The signature is checked before the expiry, so an unsigned URL learns
 * nothing. `contentType` of the answer is the URL's: the one a read is served with.
 */
export function checkSignedRequest(
  secret: string,
  request: { method: string; objectKey: string; query: URLSearchParams; contentType: string | undefined },
  nowSeconds: number,
): SignedRequestCheck {
  const known = new Set<string>(Object.values(SIGNED_PARAMS));
  const names = [...request.query.keys()];
  if (!names.some((name) => known.has(name))) return { ok: false, problem: 'missing' };
  if (names.length !== known.size || new Set(names).size !== names.length) {
    return { ok: false, problem: 'mismatch' };
  }
  if (!names.every((name) => known.has(name))) return { ok: false, problem: 'mismatch' };
  const expiresText = request.query.get(SIGNED_PARAMS.expires) ?? '';
  const signedType = request.query.get(SIGNED_PARAMS.contentType) ?? '';
  const signature = request.query.get(SIGNED_PARAMS.signature) ?? '';
  if (!/^\d{1,12}$/.test(expiresText) || !/^[0-9a-f]{64}$/.test(signature)) {
    return { ok: false, problem: 'mismatch' };
  }
  const expires = Number(expiresText);
  const method = request.method === 'HEAD' ? 'GET' : request.method;
  if (!verifySignature(secret, method, request.objectKey, expires, signedType, signature)) {
    return { ok: false, problem: 'mismatch' };
  }
  // SigV4 trims a signed header's value; nothing else is forgiven (case included). A read sends no body.
  if (method !== 'GET' && (request.contentType ?? '').trim() !== signedType) {
    return { ok: false, problem: 'content-type', expected: signedType, sent: request.contentType };
  }
  if (nowSeconds > expires) return { ok: false, problem: 'expired', expires };
  return { ok: true, expires, contentType: signedType };
}
