/**
 * The hottest statements (a create, a job's claim, read, write and completion) as fixed SQL text with
 * numbered parameters, sent past Drizzle's query builder. On PostgreSQL each is a named prepared
 * statement: parsed once per connection, with its plan cached, instead of parsed and planned on every
 * call (measured: Drizzle's building was 9 % of a create's CPU in the service, parsing and planning a
 * good part of the server's). PGlite runs one connection in this process and takes the text as is.
 * Errors pass through the same translation as Drizzle's queries (the client is the wrapped one).
 */
import type { Db } from './database.ts';

/** A statement with a name unique in the service and its text. */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

/** The rows of a raw `db.execute` result (node-postgres and PGlite both answer `{ rows }`). */
export function rowsOf<Row = Record<string, unknown>>(result: unknown): Row[] {
  return (result as { rows: Row[] }).rows;
}

/** A timestamp column of a raw row: a Date where the driver parsed it, its text where it did not. */
export function rowDate(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}

/** `rowDate`, or null for a null column. */
export function rowDateOrNull(value: unknown): Date | null {
  return value === null || value === undefined ? null : rowDate(value);
}

/** Declares a statement; `name` must be unique among the service's prepared statements. */
export function prepared(name: string, text: string): PreparedStatement {
  return { name: `cqs_${name}`, text };
}

type Rows = { rows: Record<string, unknown>[] };
interface PgQueryable {
  query(config: { name: string; text: string; values: unknown[] }): Promise<Rows>;
}
interface PgliteQueryable {
  query(text: string, values: unknown[]): Promise<Rows>;
}

/** The driver under each open database's Drizzle instance, and which kind it is. */
const drivers = new WeakMap<
  Db,
  { kind: 'pglite'; client: PgliteQueryable } | { kind: 'postgres'; client: PgQueryable }
>();

/** Registers the driver of a database as it is opened (`database.ts`). */
export function registerDriver(db: Db, kind: 'pglite' | 'postgres', client: object): void {
  drivers.set(db, { kind, client } as never);
}

/**
 * Runs the statement on the database (not in a transaction: a transaction's statements go through its
 * own Drizzle handle) and returns its rows.
 */
export async function runPrepared(
  db: Db,
  statement: PreparedStatement,
  values: unknown[],
): Promise<Record<string, unknown>[]> {
  const driver = drivers.get(db);
  if (!driver) throw new Error(`${statement.name} runs on an open database, not in a transaction`);
  const result =
    driver.kind === 'postgres'
      ? await driver.client.query({ name: statement.name, text: statement.text, values })
      : await driver.client.query(statement.text, values);
  return result.rows;
}
