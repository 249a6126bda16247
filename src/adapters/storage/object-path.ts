/**
 * The one function that turns an object key into a file path of the embedded storage. Every file-system
 * access of the embedded backend goes through it, so no key can name a file outside the objects folder.
 */
import { isAbsolute, resolve, sep } from 'node:path';

/** Thrown for a key that cannot name an object (empty, absolute, `..`, NUL, hidden segment, …). */
export class InvalidObjectKeyError extends Error {
  override name = 'InvalidObjectKeyError';
}

/** The longest key accepted, as S3's limit (in UTF-8 bytes). */
const MAX_KEY_BYTES = 1024;

/** The absolute path of `objectKey` under `root`, or an InvalidObjectKeyError. */
export function objectPath(root: string, objectKey: string): string {
  if (objectKey.length === 0) throw new InvalidObjectKeyError('empty object key');
  if (Buffer.byteLength(objectKey, 'utf8') > MAX_KEY_BYTES)
    throw new InvalidObjectKeyError('object key too long');
  // Control characters include NUL, which would cut the path short in the file system's C API.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find them
  if (/[\u0000-\u001f\u007f\\]/.test(objectKey)) {
    throw new InvalidObjectKeyError('object key holds a control character or a backslash');
  }
  if (objectKey.startsWith('/') || isAbsolute(objectKey))
    throw new InvalidObjectKeyError('absolute object key');
  for (const segment of objectKey.split('/')) {
    // Leading dots also refuse `.` and `..`, and keep hidden names (temp files) out of reach.
    if (segment.length === 0 || segment.startsWith('.')) {
      throw new InvalidObjectKeyError('object key has an empty, relative or hidden segment');
    }
  }
  const base = resolve(root);
  const path = resolve(base, objectKey);
  // Belt and braces: whatever the checks above missed, the result must still lie inside the root.
  if (!path.startsWith(base + sep)) throw new InvalidObjectKeyError('object key escapes the storage root');
  return path;
}
