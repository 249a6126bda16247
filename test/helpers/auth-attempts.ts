/** Requests of the failed-authentication tests: from a chosen client address, with a chosen key. */
import { randomInt } from 'node:crypto';
import type { Harness } from './harness.ts';

/** The endpoint the attempts ask for (any authenticated route would do). */
export const LIST = '/api/v1/product/list';
/** A well-formed key no one has. */
export const UNKNOWN_KEY = 'cqs_000000000000000000000000000000000000';

/** A random private address, so runs sharing one Redis never count each other's failures. */
export function address(): string {
  return `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
}

/** GET LIST from `from` with `key` as a Bearer key. */
export function attempt(h: Harness, from: string, key: string) {
  return h.app.inject({
    method: 'GET',
    url: LIST,
    remoteAddress: from,
    headers: { authorization: `Bearer ${key}` },
  });
}
