/** Companies: the tenants. */
import { eq, sql } from 'drizzle-orm';
import { BOOTSTRAP_LOCK_ID } from '../advisory-locks.ts';
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

/**
 * Waits for, then holds until the transaction ends, the lock of the first-start bootstrap: a second process
 * starting at the same time then sees the first one's company. Call it inside a transaction.
 */
export async function lockBootstrap(tx: Db): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK_ID})`);
}

/** Sets the company's retention period in days (null: keep calls for ever); undefined when no such company. */
export async function setRetentionDays(
  db: Db,
  companyId: string,
  days: number | null,
): Promise<Company | undefined> {
  const [row] = await db
    .update(companies)
    .set({ retentionDays: days })
    .where(eq(companies.id, companyId))
    .returning();
  return row;
}
