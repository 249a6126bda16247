/** Companies: the tenants. */
import { eq } from 'drizzle-orm';
import type { Db } from '../database.ts';
import { companies } from '../schema.ts';

/** A company row. */
export type Company = typeof companies.$inferSelect;

/** Inserts a company. */
export async function insertCompany(db: Db, name: string): Promise<Company> {
  const [row] = await db.insert(companies).values({ name }).returning();
  return row as Company;
}

/** The company with this id, if any. */
export async function findCompanyById(db: Db, id: string): Promise<Company | undefined> {
  const [row] = await db.select().from(companies).where(eq(companies.id, id));
  return row;
}

/** The companies with this exact name (names are not unique, but seed files match on them). */
export async function findCompaniesByName(db: Db, name: string): Promise<Company[]> {
  return db.select().from(companies).where(eq(companies.name, name));
}

/** Every company, oldest first. */
export async function listCompanies(db: Db): Promise<Company[]> {
  return db.select().from(companies).orderBy(companies.createdAt);
}

/** True when no company exists yet (a new, empty database). */
export async function hasNoCompanies(db: Db): Promise<boolean> {
  const rows = await db.select({ id: companies.id }).from(companies).limit(1);
  return rows.length === 0;
}
