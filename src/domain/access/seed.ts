/** Provisioning from a seed file, idempotently: a second run with the same file changes nothing. */
import { type Static, Type } from 'typebox';
import { Value } from 'typebox/value';
import type { Db } from '../../adapters/db/database.ts';
import { findCompaniesByName } from '../../adapters/db/repositories/companies.ts';
import {
  findProductByName,
  grantProduct,
  insertProduct,
  setProductStatus,
} from '../../adapters/db/repositories/products.ts';
import { ConflictError, ValidationError } from '../errors.ts';
import {
  activeKeysWithScopes,
  createApiKey,
  createCompany,
  findKeyBySecret,
  parseScopes,
  upsertSeedUser,
} from './provisioning.ts';

const Role = Type.Union([Type.Literal('admin'), Type.Literal('agent')]);
const Status = Type.Union([Type.Literal('active'), Type.Literal('archived')]);

/** The seed file's schema. */
export const SeedFileSchema = Type.Object(
  {
    companies: Type.Array(
      Type.Object(
        {
          name: Type.String({ minLength: 1 }),
          users: Type.Optional(
            Type.Array(
              Type.Object(
                {
                  ref: Type.String({ minLength: 1 }),
                  email: Type.String({ minLength: 3 }),
                  role: Role,
                  active: Type.Optional(Type.Boolean()),
                },
                { additionalProperties: false },
              ),
            ),
          ),
          products: Type.Optional(
            Type.Array(
              Type.Object(
                {
                  name: Type.String({ minLength: 1 }),
                  status: Type.Optional(Status),
                  grant: Type.Optional(Type.Array(Type.String())),
                },
                { additionalProperties: false },
              ),
            ),
          ),
          api_keys: Type.Optional(
            Type.Array(
              Type.Object(
                {
                  user: Type.String(),
                  scopes: Type.Array(Type.String()),
                  key: Type.Optional(Type.String()),
                },
                { additionalProperties: false },
              ),
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** A parsed seed file. */
export type SeedFile = Static<typeof SeedFileSchema>;

/** What a seed run did. `newKeys` holds the only copy of keys it made. */
export interface SeedReport {
  created: string[];
  unchanged: number;
  newKeys: { company: string; user: string; key: string; scopes: string[] }[];
}

/** Checks a seed file's shape; throws ValidationError naming the first problem. */
export function parseSeedFile(data: unknown): SeedFile {
  const first = Value.Errors(SeedFileSchema, data)[0];
  if (first) throw new ValidationError(first.message, first.instancePath || '/');
  return data as SeedFile;
}

/** Applies a seed file inside one transaction. */
export async function applySeed(db: Db, file: SeedFile): Promise<SeedReport> {
  const report: SeedReport = { created: [], unchanged: 0, newKeys: [] };
  await db.transaction(async (tx) => {
    for (const c of file.companies) {
      const existing = await findCompaniesByName(tx, c.name);
      if (existing.length > 1)
        throw new ConflictError(`more than one company is named ${JSON.stringify(c.name)}`);
      const company = existing[0] ?? (await createCompany(tx, c.name));
      if (existing[0]) report.unchanged++;
      else report.created.push(`company ${c.name}`);

      const userIds = new Map<string, string>();
      for (const u of c.users ?? []) {
        if (userIds.has(u.ref)) throw new ValidationError(`duplicate user ref "${u.ref}"`, 'users.ref');
        const { user, changed } = await upsertSeedUser(tx, company.id, u.ref, {
          email: u.email,
          role: u.role,
          active: u.active ?? true,
        });
        userIds.set(u.ref, user.id);
        if (changed) report.created.push(`user ${u.ref} <${u.email}>`);
        else report.unchanged++;
      }
      const userId = (ref: string) => {
        const id = userIds.get(ref);
        if (!id) throw new ValidationError(`no user with ref "${ref}" in company ${c.name}`, 'ref');
        return id;
      };

      for (const p of c.products ?? []) {
        const status = p.status ?? 'active';
        let product = await findProductByName(tx, company.id, p.name);
        if (!product) {
          product = await insertProduct(tx, company.id, { name: p.name, status });
          report.created.push(`product ${p.name}`);
        } else if (product.status !== status) {
          await setProductStatus(tx, company.id, product.id, status);
          report.created.push(`product ${p.name} status ${status}`);
        } else {
          report.unchanged++;
        }
        for (const ref of p.grant ?? []) await grantProduct(tx, company.id, product.id, userId(ref));
      }

      for (const k of c.api_keys ?? []) {
        const owner = userId(k.user);
        const scopes = parseScopes(k.scopes);
        if (k.key !== undefined) {
          const found = await findKeyBySecret(tx, k.key);
          if (found) {
            if (found.companyId !== company.id || found.userId !== owner) {
              throw new ConflictError(`a key in the seed file already belongs to someone else`);
            }
            report.unchanged++;
            continue;
          }
          await createApiKey(tx, company.id, owner, scopes, k.key);
          report.created.push(`api key for ${k.user}`);
          continue;
        }
        if ((await activeKeysWithScopes(tx, company.id, owner, scopes)).length > 0) {
          report.unchanged++;
          continue;
        }
        const issued = await createApiKey(tx, company.id, owner, scopes);
        report.created.push(`api key for ${k.user}`);
        report.newKeys.push({ company: c.name, user: k.user, key: issued.key, scopes });
      }
    }
  });
  return report;
}
