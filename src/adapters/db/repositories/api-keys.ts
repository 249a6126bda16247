/** API keys, found by the hash of the key (the key is how the company is found). */
import { and, eq, isNull } from 'drizzle-orm';
import type { Db } from '../database.ts';
import { apiKeys, type Scope, users } from '../schema.ts';

/** A key row, without its hash. */
export interface ApiKeyRecord {
  id: string;
  companyId: string;
  userId: string;
  keyPrefix: string;
  scopes: Scope[];
  createdAt: Date;
  revokedAt: Date | null;
}

/** What authentication needs about a key: its row and its user's role and active flag. */
export interface KeyOwner {
  keyId: string;
  companyId: string;
  userId: string;
  scopes: Scope[];
  revoked: boolean;
  userActive: boolean;
  role: 'admin' | 'agent';
}

const publicColumns = {
  id: apiKeys.id,
  companyId: apiKeys.companyId,
  userId: apiKeys.userId,
  keyPrefix: apiKeys.keyPrefix,
  scopes: apiKeys.scopes,
  createdAt: apiKeys.createdAt,
  revokedAt: apiKeys.revokedAt,
};

/** Inserts a key by its hash; returns undefined when a key with that hash exists already. */
export async function insertApiKey(
  db: Db,
  values: { companyId: string; userId: string; keyHash: string; keyPrefix: string; scopes: Scope[] },
): Promise<ApiKeyRecord | undefined> {
  const [row] = await db.insert(apiKeys).values(values).onConflictDoNothing().returning(publicColumns);
  return row as ApiKeyRecord | undefined;
}

/** The key with this hash, with its owner; undefined when there is none. */
export async function findKeyOwnerByHash(db: Db, keyHash: string): Promise<KeyOwner | undefined> {
  const [row] = await db
    .select({
      keyId: apiKeys.id,
      companyId: apiKeys.companyId,
      userId: apiKeys.userId,
      scopes: apiKeys.scopes,
      revokedAt: apiKeys.revokedAt,
      userActive: users.active,
      role: users.role,
    })
    .from(apiKeys)
    .innerJoin(users, and(eq(users.companyId, apiKeys.companyId), eq(users.id, apiKeys.userId)))
    .where(eq(apiKeys.keyHash, keyHash));
  if (!row) return undefined;
  return {
    keyId: row.keyId,
    companyId: row.companyId,
    userId: row.userId,
    scopes: row.scopes,
    revoked: row.revokedAt !== null,
    userActive: row.userActive,
    role: row.role,
  };
}

/** The key with this hash, without its owner. */
export async function findApiKeyByHash(db: Db, keyHash: string): Promise<ApiKeyRecord | undefined> {
  const [row] = await db.select(publicColumns).from(apiKeys).where(eq(apiKeys.keyHash, keyHash));
  return row as ApiKeyRecord | undefined;
}

/** Revokes a key of the company; returns it, or undefined when the company has no such key. */
export async function revokeApiKey(
  db: Db,
  companyId: string,
  keyId: string,
): Promise<ApiKeyRecord | undefined> {
  const [row] = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKeys.companyId, companyId), eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)))
    .returning(publicColumns);
  return row as ApiKeyRecord | undefined;
}

/** Every key of the company. */
export async function listApiKeys(db: Db, companyId: string): Promise<ApiKeyRecord[]> {
  return (await db
    .select(publicColumns)
    .from(apiKeys)
    .where(eq(apiKeys.companyId, companyId))
    .orderBy(apiKeys.createdAt)) as ApiKeyRecord[];
}
