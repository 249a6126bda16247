/**
 * API keys: `cqs_` + 30 random base62 characters + 6 base62 characters of their CRC32, so a secret
 * scanner (or this service, before any database look-up) can tell a real key from a typo offline.
 */
import { hash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const PREFIX = 'cqs_';
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
const KEY_PATTERN = /^cqs_[0-9A-Za-z]{36}$/;

/** The scopes a key can carry, and one scope: the list lives beside the column that stores it. */
export { SCOPES, type Scope } from '../../adapters/db/schema.ts';

function base62(value: number, width: number): string {
  let out = '';
  let rest = value;
  while (rest > 0) {
    out = ALPHABET[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out.padStart(width, '0');
}

function checksum(body: string): string {
  return base62(crc32(body), CHECKSUM_LENGTH);
}

/** Makes a new random key. */
export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < RANDOM_LENGTH; i++) body += ALPHABET[randomInt(62)];
  return PREFIX + body + checksum(body);
}

/** True when `key` has the key format and its checksum agrees. */
export function isWellFormedApiKey(key: string): boolean {
  if (!KEY_PATTERN.test(key)) return false;
  const body = key.slice(PREFIX.length, PREFIX.length + RANDOM_LENGTH);
  return key.slice(PREFIX.length + RANDOM_LENGTH) === checksum(body);
}

/** The stored form of a key: hex SHA-256. Keys carry 178 bits of entropy, so a fast hash suffices. */
export function hashApiKey(key: string): string {
  // One-shot: no Hash object per request (authentication hashes every request's key).
  return hash('sha256', key, 'hex');
}

/** The part of a key that is safe to show an operator. */
export function apiKeyPrefix(key: string): string {
  return key.slice(0, 8);
}
