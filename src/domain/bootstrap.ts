/** The demo company made on the very first start, so a newcomer can call the API at once. */
import { sql } from 'drizzle-orm';
import type { Db } from '../adapters/db/database.ts';
import { hasNoCompanies } from '../adapters/db/repositories/companies.ts';
import { createApiKey, createCompany, createProduct, createUser } from './provisioning.ts';

/** What the bootstrap made, including the only copy of the demo key. */
export interface BootstrapResult {
  companyId: string;
  email: string;
  productId: number;
  key: string;
}

/** Any fixed number: the lock that stops two processes starting at once from both bootstrapping. */
const BOOTSTRAP_LOCK_ID = 7_416_302_552;

/** Creates the demo company when the database has no company at all; otherwise does nothing. */
export async function bootstrapIfEmpty(
  db: Db,
  kind: 'pglite' | 'postgres',
): Promise<BootstrapResult | undefined> {
  return db.transaction(async (tx) => {
    if (kind === 'postgres') await tx.execute(sql`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK_ID})`);
    if (!(await hasNoCompanies(tx))) return undefined;
    const company = await createCompany(tx, 'Demo Company');
    const user = await createUser(tx, company.id, { email: 'admin@demo.test', role: 'admin' });
    const product = await createProduct(tx, company.id, 'Demo Product');
    const issued = await createApiKey(tx, company.id, user.id, ['calls', 'handoff:write']);
    return { companyId: company.id, email: user.email, productId: product.id, key: issued.key };
  });
}
