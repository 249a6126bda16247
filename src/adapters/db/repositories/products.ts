/** Products and their grants to users. Every query is filtered by company. */
import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../database.ts';
import { productGrants, products } from '../schema.ts';

/** A product row. */
export type Product = typeof products.$inferSelect;
/** The viewer whose visibility rules apply (decision 15). */
export interface Viewer {
  companyId: string;
  userId: string;
  role: 'admin' | 'agent';
}

/** Inserts a product. */
export async function insertProduct(
  db: Db,
  companyId: string,
  values: { name: string; status?: 'active' | 'archived' },
): Promise<Product> {
  const [row] = await db
    .insert(products)
    .values({ companyId, name: values.name, status: values.status ?? 'active' })
    .returning();
  return row as Product;
}

/** The product of the company with this name. */
export async function findProductByName(
  db: Db,
  companyId: string,
  name: string,
): Promise<Product | undefined> {
  const [row] = await db
    .select()
    .from(products)
    .where(and(eq(products.companyId, companyId), eq(products.name, name)));
  return row;
}

function visibleTo(viewer: Viewer) {
  const granted = sql`exists (select 1 from ${productGrants} g where g.company_id = ${products.companyId}
    and g.product_id = ${products.id} and g.user_id = ${viewer.userId})`;
  return and(eq(products.companyId, viewer.companyId), viewer.role === 'admin' ? undefined : granted);
}

/** Products the viewer may see: all of the company's for an admin, the granted ones otherwise. */
export async function listVisibleProducts(db: Db, viewer: Viewer): Promise<Product[]> {
  return db.select().from(products).where(visibleTo(viewer)).orderBy(asc(products.id));
}

/** The product with this id when the viewer may see it. */
export async function findVisibleProduct(
  db: Db,
  viewer: Viewer,
  productId: number,
): Promise<Product | undefined> {
  const [row] = await db
    .select()
    .from(products)
    .where(and(visibleTo(viewer), eq(products.id, productId)));
  return row;
}

/** Sets a product's status; undefined when the company has no such product. */
export async function setProductStatus(
  db: Db,
  companyId: string,
  productId: number,
  status: 'active' | 'archived',
): Promise<Product | undefined> {
  const [row] = await db
    .update(products)
    .set({ status })
    .where(and(eq(products.companyId, companyId), eq(products.id, productId)))
    .returning();
  return row;
}

/** Grants a product to a user; granting twice is a no-op. */
export async function grantProduct(
  db: Db,
  companyId: string,
  productId: number,
  userId: string,
): Promise<void> {
  await db.insert(productGrants).values({ companyId, productId, userId }).onConflictDoNothing();
}

/** Every product of the company. */
export async function listProducts(db: Db, companyId: string): Promise<Product[]> {
  return db.select().from(products).where(eq(products.companyId, companyId)).orderBy(asc(products.id));
}
