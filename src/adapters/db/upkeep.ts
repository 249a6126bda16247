/**
 * The planner's statistics and dead rows, kept up by the service where autovacuum does not.
 *
 * PGlite runs PostgreSQL in single-user mode: no autovacuum, so no table of the embedded database was ever
 * analysed or vacuumed. Every plan, the cached plans of the foreign-key checks included, was made as for
 * empty tables and kept for the life of the process: each call/create's checks of its call row scanned the
 * company's whole `conversations_media_list_idx` (3.3 ms a create at 500 calls, 4.3 ms at 3,000; 1.7 ms
 * with statistics), and the queue's deleted jobs were never reclaimed. On PostgreSQL autovacuum does this,
 * but first visits a new database after `autovacuum_naptime` (a minute by default): until then its plans
 * are made the same way. So the worker runs, on autovacuum's own rule and settings, VACUUM and ANALYZE on
 * the embedded database, and on PostgreSQL ANALYZE of the tables autovacuum has not analysed yet.
 */
import { sql } from 'drizzle-orm';
import type { Database } from './database.ts';
import { rowsOf } from './prepared.ts';

/** What one round of upkeep did. */
export interface UpkeepRound {
  analyzed: string[];
  vacuumed: string[];
}

/**
 * On PostgreSQL, the largest table analysed before autovacuum's first visit: what is at stake is a new
 * database's first minute, when tables are small; a large table never analysed (a restored dump) is left to
 * autovacuum, since its ANALYZE could outlast DB_STATEMENT_TIMEOUT.
 */
const FIRST_ANALYZE_MAX_ROWS = 100_000;

interface DueTable {
  table: string;
  vacuum: boolean;
  analyze: boolean;
}

/**
 * The service's tables that autovacuum's rule says are due: more dead rows than `autovacuum_vacuum_threshold`
 * plus `autovacuum_vacuum_scale_factor` of the rows, or more rows changed since the last ANALYZE than
 * `autovacuum_analyze_threshold` plus `autovacuum_analyze_scale_factor` of them. PGlite's change counters
 * start from zero at every start, so on it a table with rows that was never analysed (`reltuples` < 0) is
 * due too. `firstOnly` (PostgreSQL) keeps the small tables never analysed and leaves VACUUM to autovacuum.
 */
async function dueTables(database: Database, firstOnly: boolean): Promise<DueTable[]> {
  const result = await database.db.execute(sql`
    with t as (
      select s.relname as table, s.n_dead_tup, s.n_mod_since_analyze, s.n_live_tup,
        c.reltuples < 0 as never_analyzed, greatest(c.reltuples, 0) as rows,
        pg_relation_size(s.relid) > 0 as has_pages
      from pg_stat_user_tables s join pg_class c on c.oid = s.relid
      where s.schemaname = 'public'
    )
    select "table",
      not ${firstOnly} and n_dead_tup > current_setting('autovacuum_vacuum_threshold')::float8
        + current_setting('autovacuum_vacuum_scale_factor')::float8 * rows as vacuum,
      n_mod_since_analyze > current_setting('autovacuum_analyze_threshold')::float8
        + current_setting('autovacuum_analyze_scale_factor')::float8 * rows
        or (not ${firstOnly} and never_analyzed and has_pages) as analyze
    from t
    where not ${firstOnly} or (never_analyzed and n_live_tup <= ${FIRST_ANALYZE_MAX_ROWS})
    order by "table"`);
  return rowsOf<DueTable>(result).filter((t) => t.vacuum || t.analyze);
}

/**
 * One round: on the embedded database, VACUUM (ANALYZE) or ANALYZE each table that is due; on PostgreSQL,
 * ANALYZE each table that is due and that autovacuum never analysed. Idempotent; on PostgreSQL several
 * processes may run it at once (ANALYZE of one table takes a lock that makes a second one wait).
 */
export async function keepUpStatistics(database: Database): Promise<UpkeepRound> {
  const embedded = database.kind === 'pglite';
  const round: UpkeepRound = { analyzed: [], vacuumed: [] };
  for (const due of await dueTables(database, !embedded)) {
    const table = sql.identifier(due.table);
    if (embedded && due.vacuum) {
      await database.db.execute(due.analyze ? sql`vacuum (analyze) ${table}` : sql`vacuum ${table}`);
      round.vacuumed.push(due.table);
    } else {
      await database.db.execute(sql`analyze ${table}`);
    }
    if (due.analyze) round.analyzed.push(due.table);
  }
  return round;
}
