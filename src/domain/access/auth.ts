/** Authentication of API keys and the scope check. */

import type { Db } from '../../adapters/db/database.ts';
import { findKeyOwnerByHash } from '../../adapters/db/repositories/api-keys.ts';
import { ForbiddenError, UnauthenticatedError } from '../errors.ts';
import { hashApiKey, isWellFormedApiKey, type Scope } from './api-keys.ts';
import type { Principal } from './principal.ts';
import type { PrincipalCache } from './principal-cache.ts';

/**
 * Finds the principal behind a key, or throws UnauthenticatedError. A malformed key costs no query; with
 * `cache`, neither does a key seen recently (refusals are never cached), and then the principal comes back
 * at once, not in a promise (most requests). A malformed key throws at once.
 *
 * The cache is asked first, by the key as sent: a cached key is one a look-up found, so it is well formed,
 * and its checksum and SHA-256 (together about 2 µs, a twentieth of a cached handoff read) are skipped.
 * With `schedule`, a look-up runs when it lets it.
 */
export function authenticate(
  db: Db,
  key: string,
  cache?: PrincipalCache,
  schedule?: LookupScheduler,
): Principal | Promise<Principal> {
  const known = cache?.peek(key);
  if (known) return known;
  if (!isWellFormedApiKey(key)) throw new UnauthenticatedError('invalid API key');
  const load = () => lookUp(db, hashApiKey(key));
  // The cache is asked again when the look-up's turn comes: a request that waited finds its key there.
  const find = cache ? () => cache.lookup(key, load) : load;
  return schedule ? schedule(find) : find();
}

/** Runs a key's look-up when it may run (the HTTP edge's limit on look-ups per client address). */
export type LookupScheduler = (lookUp: () => Promise<Principal>) => Promise<Principal>;

async function lookUp(db: Db, keyHash: string): Promise<Principal> {
  const owner = await findKeyOwnerByHash(db, keyHash);
  if (!owner) throw new UnauthenticatedError('invalid API key');
  if (owner.revoked) throw new UnauthenticatedError('API key has been revoked');
  if (!owner.userActive) throw new UnauthenticatedError("API key's user is inactive");
  return {
    companyId: owner.companyId,
    userId: owner.userId,
    role: owner.role,
    keyId: owner.keyId,
    scopes: owner.scopes,
  };
}

/** Throws ForbiddenError unless the principal's key carries `scope`. */
export function requireScope(principal: Principal, scope: Scope): void {
  if (!principal.scopes.includes(scope)) {
    throw new ForbiddenError(`API key lacks the "${scope}" scope`);
  }
}

/** Throws ForbiddenError unless the key's user is an admin (decision 22's admin-only endpoints). */
export function requireAdmin(principal: Principal): void {
  if (principal.role !== 'admin') {
    throw new ForbiddenError("this endpoint is for admins; the API key's user is not one");
  }
}
