/** The demo company made on the very first start, so a newcomer can call the API at once. */
import type { Db } from '../../adapters/db/database.ts';
import { hasNoCompanies, lockBootstrap } from '../../adapters/db/repositories/companies.ts';
import { SCOPES } from './api-keys.ts';
import { createApiKey, createCompany, createProduct, createUser } from './provisioning.ts';

/** What the bootstrap made, including the only copy of the demo key. */
export interface BootstrapResult {
  companyId: string;
  email: string;
  productId: number;
  key: string;
}

/** Creates the demo company when the database has no company at all; otherwise does nothing. */
export async function bootstrapIfEmpty(db: Db): Promise<BootstrapResult | undefined> {
  return db.transaction(async (tx) => {
    await lockBootstrap(tx);
    if (!(await hasNoCompanies(tx))) return undefined;
    const company = await createCompany(tx, 'Demo Company');
    const user = await createUser(tx, company.id, { email: 'admin@demo.test', role: 'admin' });
    const product = await createProduct(tx, company.id, 'Demo Product');
    // The demo key carries every scope, so a newcomer can try every endpoint with it.
    const issued = await createApiKey(tx, company.id, user.id, SCOPES);
    return { companyId: company.id, email: user.email, productId: product.id, key: issued.key };
  });
}
