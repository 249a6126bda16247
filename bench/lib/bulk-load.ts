/**
 * Fills the service's `conversations` table straight through SQL (INSERT … SELECT generate_series), in
 * chunks, then VACUUM ANALYZE — so the growth and list scenarios can start from a million stored calls in
 * seconds. `fillTags` then tags a share of them, for the list's tag filter.
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
      log(`bulk load: ${stored} of ${total} rows (${((performance.now() - started) / 1000).toFixed(1)} s)`);
    }
    // VACUUM too, so autovacuum does not wake up for these rows in the middle of a measurement.
    await client.query('vacuum (analyze) conversations');
    // Flush the load's dirty pages now rather than in a checkpoint during the measurement (superuser only).
    await client.query('checkpoint').catch(() => {});
    return await count();
  } finally {
    await client.end();
  }
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
    await client.query(
      `insert into conversation_tags (company_id, conversation_uuid, key, type, value)
       select company_id, id, 'team', 'string',
              to_jsonb(case when substr(conversation_id, 6)::bigint % $1 = 0 then 'blue' else 'red' end)
       from conversations where conversation_id like 'bulk-%'
       on conflict do nothing`,
      [every],
    );
    await client.query('vacuum (analyze) conversation_tags');
    const blue = await client.query<{ n: string }>(
      `select count(*) as n from conversation_tags where key = 'team' and value #>> '{}' = 'blue'`,
    );
    log(`bulk tags: done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return Number(blue.rows[0]?.n);
  } finally {
    await client.end();
  }
}
