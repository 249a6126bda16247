/**
 * Fills the service's `conversations` table straight through SQL (INSERT … SELECT generate_series), in
 * chunks, then VACUUM ANALYZE — so the growth and list scenarios can start from a million stored calls in
 * seconds. `fillTags` then tags a share of them, for the list's tag filter.
 *
 * Only on the bench's scratch databases, while nothing else writes: the secondary indexes are dropped for
 * the load and built again after it (a sorted build instead of a million scattered inserts into eight
 * b-trees), and the foreign-key triggers are skipped (`session_replication_role = replica`, when the role
 * may set it) because every row is made valid by construction: the company's agent and product exist.
 */
import pg from 'pg';

/** Who the bulk rows belong to: the bench company's agent and product. */
export interface BulkOwner {
  agentEmail: string;
  productId: number;
}

const CHUNK = 250_000;

/** A short transcript for every bulk row (a realistic row size without gigabytes of JSON). */
const TRANSCRIPT = JSON.stringify([
  { role: 'agent', text: 'Thank you for calling, how can I help you today?', start: 0, stop: 3.5 },
  {
    role: 'customer',
    text: 'I would like to change the delivery address of my order.',
    start: 3.9,
    stop: 7.2,
  },
]);

/** Session settings for a bulk load: commits need not wait for the disk, index builds get memory. */
async function bulkSession(client: pg.Client): Promise<void> {
  await client.query(`set synchronous_commit = off`);
  await client.query(`set maintenance_work_mem = '512MB'`);
  // Superuser only; without it the foreign keys are checked row by row, which is slower but the same.
  await client.query(`set session_replication_role = replica`).catch(() => {});
}

/**
 * Runs `load` with the table's indexes that back no constraint dropped, and builds them again after
 * (also when the load fails, so the database is never left without them). The primary key stays: ON
 * CONFLICT and the foreign keys pointing at the table need it.
 */
async function withIndexesBuiltAfter(
  client: pg.Client,
  table: string,
  log: (message: string) => void,
  load: () => Promise<void>,
): Promise<void> {
  const { rows } = await client.query<{ name: string; definition: string }>(
    `select c.relname as name, pg_get_indexdef(x.indexrelid) as definition
       from pg_index x join pg_class c on c.oid = x.indexrelid
      where x.indrelid = $1::regclass
        and not exists (select 1 from pg_constraint k where k.conindid = x.indexrelid)`,
    [table],
  );
  for (const index of rows) await client.query(`drop index ${client.escapeIdentifier(index.name)}`);
  try {
    await load();
  } finally {
    const started = performance.now();
    for (const index of rows) await client.query(index.definition);
    log(
      `bulk load: ${rows.length} indexes of ${table} built in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }
}

/** Adds rows until `conversations` holds `total`; returns how many rows it holds then. */
export async function fillConversations(
  databaseUrl: string,
  owner: BulkOwner,
  total: number,
  log: (message: string) => void,
): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const who = await client.query<{ company_id: string; id: string }>(
      'select company_id, id from users where lower(email) = lower($1) and active',
      [owner.agentEmail],
    );
    const agent = who.rows[0];
    if (!agent || who.rows.length !== 1) throw new Error(`expected one agent ${owner.agentEmail}`);
    const count = async () =>
      Number((await client.query<{ n: string }>('select count(*) as n from conversations')).rows[0]?.n);
    let stored = await count();
    const started = performance.now();
    if (stored < total) {
      await bulkSession(client);
      await withIndexesBuiltAfter(client, 'conversations', log, async () => {
        while (stored < total) {
          const size = Math.min(CHUNK, total - stored);
          await client.query(
            `insert into conversations
               (company_id, agent_user_id, conversation_id, product_id, start_time, transcript, state, metadata)
             select $1, $2, 'bulk-' || g, $3, extract(epoch from now()) - g, $4::jsonb, 'stopped', '{}'::jsonb
             from generate_series($5::bigint, $6::bigint) as g`,
            [agent.company_id, agent.id, owner.productId, TRANSCRIPT, stored + 1, stored + size],
          );
          stored += size;
          log(
            `bulk load: ${stored} of ${total} rows (${((performance.now() - started) / 1000).toFixed(1)} s)`,
          );
        }
      });
    }
    await settle(client, 'conversations');
    return await count();
  } finally {
    await client.end();
  }
}

/**
 * Ends a bulk load of `table`: VACUUM as well as ANALYZE, so autovacuum does not wake up for these rows in
 * the middle of a measurement, then a checkpoint (superuser only), so the load's dirty pages (and the hint
 * bits VACUUM set) are flushed now rather than by a checkpoint the load's WAL starts during the measurement.
 */
async function settle(client: pg.Client, table: 'conversations' | 'conversation_tags'): Promise<void> {
  await client.query(`vacuum (analyze) ${table}`);
  await client.query('checkpoint').catch(() => {});
}

/** Tags every `every`-th bulk call `team` = `blue` (the others `red`); returns how many are blue. */
export async function fillTags(
  databaseUrl: string,
  every: number,
  log: (message: string) => void,
): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const started = performance.now();
    await bulkSession(client);
    await withIndexesBuiltAfter(client, 'conversation_tags', log, async () => {
      await client.query(
        `insert into conversation_tags (company_id, conversation_uuid, key, type, value)
         select company_id, id, 'team', 'string',
                to_jsonb(case when substr(conversation_id, 6)::bigint % $1 = 0 then 'blue' else 'red' end)
         from conversations where conversation_id like 'bulk-%'
         on conflict do nothing`,
        [every],
      );
    });
    await settle(client, 'conversation_tags');
    const blue = await client.query<{ n: string }>(
      `select count(*) as n from conversation_tags where key = 'team' and value #>> '{}' = 'blue'`,
    );
    log(`bulk tags: done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return Number(blue.rows[0]?.n);
  } finally {
    await client.end();
  }
}
