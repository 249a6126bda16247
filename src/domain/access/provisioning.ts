/** Operator actions: companies, users, products, grants and keys. The CLI and seed files use these. */
import type { Db } from '../../adapters/db/database.ts';
import {
  findApiKeyByHash,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
} from '../../adapters/db/repositories/api-keys.ts';
import { findCompanyById, insertCompany } from '../../adapters/db/repositories/companies.ts';
import { grantProduct, insertProduct, setProductStatus } from '../../adapters/db/repositories/products.ts';
import { findUser, findUserBySeedRef, insertUser, updateUser } from '../../adapters/db/repositories/users.ts';
import { ConflictError, findDomainError, NotFoundError, ValidationError } from '../errors.ts';
import {
  apiKeyPrefix,
  generateApiKey,
  hashApiKey,
  isWellFormedApiKey,
  SCOPES,
  type Scope,
} from './api-keys.ts';

/** A key just made: the only time the secret is available. */
export interface IssuedKey {
  id: string;
  key: string;
  companyId: string;
  userId: string;
  scopes: Scope[];
}

/** Creates a company. */
export async function createCompany(db: Db, name: string) {
  if (!name.trim()) throw new ValidationError('must not be empty', 'name');
  return insertCompany(db, name.trim());
}

async function requireCompany(db: Db, companyId: string) {
  const company = await findCompanyById(db, companyId);
  if (!company) throw new NotFoundError(`company ${companyId} not found`);
  return company;
}

/** Creates a user of a company. */
export async function createUser(
  db: Db,
  companyId: string,
  values: { email: string; role: 'admin' | 'agent'; active?: boolean },
) {
  await requireCompany(db, companyId);
  if (!/^[^\s@]+@[^\s@]+$/.test(values.email)) throw new ValidationError('is not an email address', 'email');
  return insertUser(db, companyId, values);
}

/** Creates a product of a company. */
export async function createProduct(
  db: Db,
  companyId: string,
  name: string,
  status: 'active' | 'archived' = 'active',
) {
  await requireCompany(db, companyId);
  if (!name.trim()) throw new ValidationError('must not be empty', 'name');
  return insertProduct(db, companyId, { name: name.trim(), status });
}

/** Archives (or re-activates) a product. */
export async function setProductArchived(db: Db, companyId: string, productId: number, archived: boolean) {
  const product = await setProductStatus(db, companyId, productId, archived ? 'archived' : 'active');
  if (!product) throw new NotFoundError(`product ${productId} not found`);
  return product;
}

/** Grants a product to a user of the same company. */
export async function grantProductToUser(db: Db, companyId: string, productId: number, userId: string) {
  const user = await findUser(db, companyId, userId);
  if (!user) throw new NotFoundError(`user ${userId} not found`);
  try {
    await grantProduct(db, companyId, productId, userId);
  } catch (error) {
    // The user was found above, so the reference that failed is the product's.
    if (findDomainError(error) instanceof NotFoundError)
      throw new NotFoundError(`product ${productId} not found`);
    throw error;
  }
}

/** Checks a list of scope names. */
export function parseScopes(scopes: readonly string[]): Scope[] {
  if (scopes.length === 0) throw new ValidationError('at least one scope is needed', 'scopes');
  for (const s of scopes) {
    if (!(SCOPES as readonly string[]).includes(s)) {
      throw new ValidationError(`unknown scope "${s}"; scopes are ${SCOPES.join(', ')}`, 'scopes');
    }
  }
  return [...new Set(scopes)] as Scope[];
}

/** Issues a key for a user; `key` adopts a given well-formed key instead of making one. */
export async function createApiKey(
  db: Db,
  companyId: string,
  userId: string,
  scopes: readonly string[],
  key: string = generateApiKey(),
): Promise<IssuedKey> {
  const checked = parseScopes(scopes);
  if (!isWellFormedApiKey(key)) throw new ValidationError('is not a well-formed cqs_ key', 'key');
  const user = await findUser(db, companyId, userId);
  if (!user) throw new NotFoundError(`user ${userId} not found`);
  const row = await insertApiKey(db, {
    companyId,
    userId,
    keyHash: hashApiKey(key),
    keyPrefix: apiKeyPrefix(key),
    scopes: checked,
  });
  if (!row) throw new ConflictError('that key exists already');
  return { id: row.id, key, companyId, userId, scopes: checked };
}

/** Revokes a key of the company, named by its id or by the key itself. */
export async function revokeKey(db: Db, companyId: string, keyIdOrKey: string) {
  // An operator who finds a leaked key in a log has the key, not its id: both name it.
  let keyId = keyIdOrKey;
  if (keyIdOrKey.startsWith('cqs_')) {
    if (!isWellFormedApiKey(keyIdOrKey))
      throw new ValidationError('is not an API key (its checksum is wrong)', 'key');
    const found = await findApiKeyByHash(db, hashApiKey(keyIdOrKey));
    if (!found || found.companyId !== companyId)
      throw new NotFoundError('no API key of this company is that key');
    keyId = found.id;
  }
  const row = await revokeApiKey(db, companyId, keyId);
  if (!row) throw new NotFoundError(`active API key ${keyId} not found`);
  return row;
}

/** Finds a key by its secret (for seed files that name keys verbatim). */
export async function findKeyBySecret(db: Db, key: string) {
  return findApiKeyByHash(db, hashApiKey(key));
}

/** The active keys of a user that carry exactly these scopes. */
export async function activeKeysWithScopes(db: Db, companyId: string, userId: string, scopes: Scope[]) {
  const wanted = [...scopes].sort().join(' ');
  return (await listApiKeys(db, companyId)).filter(
    (k) => k.userId === userId && k.revokedAt === null && [...k.scopes].sort().join(' ') === wanted,
  );
}

/** Records the seed `ref` of a user, or changes its email, role and active flag to what a seed file says. */
export async function upsertSeedUser(
  db: Db,
  companyId: string,
  ref: string,
  values: { email: string; role: 'admin' | 'agent'; active: boolean },
) {
  const existing = await findUserBySeedRef(db, companyId, ref);
  if (!existing) return { user: await insertUser(db, companyId, { ...values, seedRef: ref }), changed: true };
  if (existing.email === values.email && existing.role === values.role && existing.active === values.active) {
    return { user: existing, changed: false };
  }
  return { user: (await updateUser(db, companyId, existing.id, values)) ?? existing, changed: true };
}
