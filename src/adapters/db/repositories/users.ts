/** Users of a company. Every query is filtered by company. */
import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../database.ts';
import { users } from '../schema.ts';

/** A user row. */
export type User = typeof users.$inferSelect;

/** Inserts a user. */
export async function insertUser(
  db: Db,
  companyId: string,
  values: { email: string; role: 'admin' | 'agent'; active?: boolean; seedRef?: string },
): Promise<User> {
  const [row] = await db
    .insert(users)
    .values({
      companyId,
      email: values.email,
      role: values.role,
      active: values.active ?? true,
      seedRef: values.seedRef ?? null,
    })
    .returning();
  return row as User;
}

/** The user with this id in this company. */
export async function findUser(db: Db, companyId: string, userId: string): Promise<User | undefined> {
  const [row] = await db
    .select()
    .from(users)
    .where(and(eq(users.companyId, companyId), eq(users.id, userId)));
  return row;
}

/** Active users of the company whose email equals `email` without regard to case, oldest first. */
export async function findActiveUsersByEmail(db: Db, companyId: string, email: string): Promise<User[]> {
  return db
    .select()
    .from(users)
    .where(
      and(
        eq(users.companyId, companyId),
        sql`lower(${users.email}) = lower(${email})`,
        eq(users.active, true),
      ),
    )
    .orderBy(asc(users.createdAt), asc(users.id));
}

/** Ids of the company's users, active or not, whose email equals `email` without regard to case. */
export async function findUserIdsByEmail(db: Db, companyId: string, email: string): Promise<string[]> {
  const rows = await db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.companyId, companyId), sql`lower(${users.email}) = lower(${email})`));
  return rows.map((r) => r.id);
}

/** Every user of the company. */
export async function listUsers(db: Db, companyId: string): Promise<User[]> {
  return db.select().from(users).where(eq(users.companyId, companyId)).orderBy(asc(users.createdAt));
}

/** Sets a user's active flag and role. */
export async function updateUser(
  db: Db,
  companyId: string,
  userId: string,
  values: { active?: boolean; role?: 'admin' | 'agent'; email?: string },
): Promise<User | undefined> {
  const [row] = await db
    .update(users)
    .set(values)
    .where(and(eq(users.companyId, companyId), eq(users.id, userId)))
    .returning();
  return row;
}

/** The user of a company that a seed file named with `ref`. */
export async function findUserBySeedRef(db: Db, companyId: string, ref: string): Promise<User | undefined> {
  const [row] = await db
    .select()
    .from(users)
    .where(and(eq(users.companyId, companyId), eq(users.seedRef, ref)));
  return row;
}
