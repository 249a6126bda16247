/**
 * Fills the service's `conversations` table straight through SQL (INSERT … SELECT generate_series), in
 * chunks, then VACUUM ANALYZE — so the growth and list scenarios can start from a million stored calls in
 * seconds. `fillTags` then tags a share of them, for the list's tag filter; `fillEvents` fills the event
 * log for the feed's scenario.
 *
 * Only on the bench's scratch databases, while nothing else writes: the secondary indexes are dropped for
 * the load and built again after it (a sorted build instead of a million scattered inserts into eight
 * b-trees), and the foreign-key triggers are skipped (`session_replication_role = replica`, when the role
 * may set it) because every row is made valid by construction: the company's agent and product exist.
 */
import type pg from 'pg';
import { withClient } from './postgres.ts';

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

/** The one active user of `email`: the bulk rows' agent and company. */
async function agentOf(client: pg.Client, email: string): Promise<{ company_id: string; id: string }> {
  const who = await client.query<{ company_id: string; id: string }>(
    'select company_id, id from users where lower(email) = lower($1) and active',
    [email],
  );
  const agent = who.rows[0];
  if (!agent || who.rows.length !== 1) throw new Error(`expected one agent ${email}`);
  return agent;
}

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
  return withClient(databaseUrl, async (client) => {
    const agent = await agentOf(client, owner.agentEmail);
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
  });
}

/**
 * Ends a bulk load of `table`: VACUUM as well as ANALYZE, so autovacuum does not wake up for these rows in
 * the middle of a measurement, then a checkpoint (superuser only), so the load's dirty pages (and the hint
 * bits VACUUM set) are flushed now rather than by a checkpoint the load's WAL starts during the measurement.
 */
async function settle(
  client: pg.Client,
  table: 'conversations' | 'conversation_tags' | 'events',
): Promise<void> {
  await client.query(`vacuum (analyze) ${table}`);
  await client.query('checkpoint').catch(() => {});
}

/** Tags every `every`-th bulk call `team` = `blue` (the others `red`); returns how many are blue. */
export async function fillTags(
  databaseUrl: string,
  every: number,
  log: (message: string) => void,
): Promise<number> {
  return withClient(databaseUrl, async (client) => {
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
  });
}

/** Events per loading transaction: each transaction has its own id, as the service's writes do. */
const EVENTS_PER_TRANSACTION = 1000;
/** Every how many events one is `call.deleted` (the rare type the feed's type filter asks for). */
export const RARE_EVENT_EVERY = 100;
/** The rare type. */
export const RARE_EVENT_TYPE = 'call.deleted';

/**
 * Adds `total` events of the company of `owner` to the log: `call.created` and `analysis.ready` in turn, every
 * RARE_EVENT_EVERY-th one RARE_EVENT_TYPE, with the data the service writes for them, created over the last
 * ten days (well inside the default retention of 30), in transactions of EVENTS_PER_TRANSACTION so their
 * positions (transaction id, sequence) look like those of many writes. Returns how many events it added.
 */
export async function fillEvents(
  databaseUrl: string,
  owner: BulkOwner,
  total: number,
  log: (message: string) => void,
): Promise<number> {
  return withClient(databaseUrl, async (client) => {
    const companyId = (await agentOf(client, owner.agentEmail)).company_id;
    const started = performance.now();
    await bulkSession(client);
    await withIndexesBuiltAfter(client, 'events', log, async () => {
      for (let from = 1; from <= total; from += EVENTS_PER_TRANSACTION) {
        const to = Math.min(total, from + EVENTS_PER_TRANSACTION - 1);
        await client.query(
          `insert into events (company_id, type, data, created_at)
           select $1, t.type,
                  jsonb_build_object('call_id', gen_random_uuid(), 'conversation_id', 'bulk-' || g,
                    'agent_email', $2::text)
                  || case t.type
                       when 'call.created' then jsonb_build_object('state', 'stopped')
                       when 'analysis.ready' then jsonb_build_object('status', 'ready', 'source', 'transcript')
                       else '{}'::jsonb
                     end,
                  now() - interval '10 days' * (1 - g::float8 / $3)
           from generate_series($4::bigint, $5::bigint) as g,
                lateral (select case when g % $6::bigint = 0 then $7::text
                                     when g % 2 = 0 then 'analysis.ready' else 'call.created' end as type) t
           order by g`,
          [companyId, owner.agentEmail, total, from, to, RARE_EVENT_EVERY, RARE_EVENT_TYPE],
        );
        if (to % 100_000 === 0 || to === total) {
          log(`bulk events: ${to} of ${total} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
        }
      }
    });
    await settle(client, 'events');
    return total;
  });
}
