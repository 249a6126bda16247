/** Test data: each test makes its own company, so tests never depend on each other. */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/adapters/db/database.ts';
import {
  createApiKey,
  createCompany,
  createProduct,
  createUser,
  grantProductToUser,
} from '../../src/domain/access/provisioning.ts';

/** A company made for one test. */
export interface TestCompany {
  id: string;
  name: string;
  /** Admin user (sees every product). */
  admin: { id: string; email: string };
  /** Agent user (sees granted products only); the `calls` key below is the admin's. */
  agent: { id: string; email: string };
  /** An active product. */
  productId: number;
  /** Key of the admin with scope `calls`. */
  key: string;
  /** Key of the admin with scope `handoff:write`. */
  writerKey: string;
  /** Key of the agent with scope `calls`. */
  agentKey: string;
  /** Adds a user to the company. */
  addUser(
    email: string,
    options?: { role?: 'admin' | 'agent'; active?: boolean },
  ): Promise<{ id: string; email: string }>;
  /** Adds a product to the company, optionally granted to users. */
  addProduct(options?: { status?: 'active' | 'archived'; grant?: string[] }): Promise<number>;
  /** Issues a key. */
  addKey(userId: string, scopes: string[]): Promise<{ id: string; key: string }>;
}

/** Makes a company with an admin, an agent, a product granted to the agent, and keys. */
export async function makeCompany(db: Db): Promise<TestCompany> {
  const tag = randomUUID().slice(0, 8);
  const company = await createCompany(db, `Company ${tag}`);
  const admin = await createUser(db, company.id, { email: `admin-${tag}@example.test`, role: 'admin' });
  const agent = await createUser(db, company.id, { email: `Agent-${tag}@Example.test`, role: 'agent' });
  const product = await createProduct(db, company.id, `Product ${tag}`);
  await grantProductToUser(db, company.id, product.id, agent.id);
  const key = await createApiKey(db, company.id, admin.id, ['calls']);
  const writerKey = await createApiKey(db, company.id, admin.id, ['handoff:write']);
  const agentKey = await createApiKey(db, company.id, agent.id, ['calls']);
  let products = 0;
  return {
    id: company.id,
    name: company.name,
    admin: { id: admin.id, email: admin.email },
    agent: { id: agent.id, email: agent.email },
    productId: product.id,
    key: key.key,
    writerKey: writerKey.key,
    agentKey: agentKey.key,
    async addUser(email, options = {}) {
      const u = await createUser(db, company.id, {
        email,
        role: options.role ?? 'agent',
        active: options.active ?? true,
      });
      return { id: u.id, email: u.email };
    },
    async addProduct(options = {}) {
      const p = await createProduct(
        db,
        company.id,
        `Product ${tag}-${++products}`,
        options.status ?? 'active',
      );
      for (const userId of options.grant ?? []) await grantProductToUser(db, company.id, p.id, userId);
      return p.id;
    },
    async addKey(userId, scopes) {
      const k = await createApiKey(db, company.id, userId, scopes);
      return { id: k.id, key: k.key };
    },
  };
}
