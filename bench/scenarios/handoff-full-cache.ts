/**
 * Scenario 4b: GET /api/v1/call-handoff/{id} of one final record while the final-record cache is full (as
 * many other final records read as HANDOFF_CACHE_SIZE keeps by default): many agents' records in memory,
 * one of them polled. Scenario 4 reads with two records cached, which hid a cache whose every hit cost
 * time in proportion to its size. On PostgreSQL, where the other records can be stored through SQL.
 */
import pg from 'pg';
import { loadConfig } from '../../src/config/config.ts';
import { startBaseline } from '../lib/baseline.ts';
import { ratioEntry } from '../lib/report.ts';
import { BENCH, type BenchService } from '../lib/service.ts';
import { BASELINE, baselineSide, readSide, TARGETS, WRITE, writeRecords } from './handoff.ts';
import {
  compare,
  requireRoute,
  type Scenario,
  type SideResult,
  using,
  withScratchService,
} from './scenario.ts';

/** The service's default capacity of the final-record cache. */
const CAPACITY = loadConfig({}).handoffCacheSize;
const NAME = `4b GET call-handoff/{id}, final, ${CAPACITY.toLocaleString('en')} records cached (PostgreSQL)`;
const READS_AT_ONCE = 50;

/** Stores `count` final records of the bench company straight through SQL; returns their ids. */
async function storeFinalRecords(databaseUrl: string, count: number): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string }>(
      `insert into call_handoffs (company_id, metadata, final, finalized_at)
         select c.id, jsonb_build_object('caller_number', '+4930123456', 'intent', 'billing', 'n', g), true, now()
           from companies c, generate_series(1, $2::int) g
          where c.name = $1
       returning id`,
      [BENCH.company, count],
    );
    return rows.map((r) => r.id);
  } finally {
    await client.end();
  }
}

/** Reads every record once, some at a time, so that each is cached. */
async function readAll(service: BenchService, ids: readonly string[], headers: Record<string, string>) {
  for (let i = 0; i < ids.length; i += READS_AT_ONCE) {
    await Promise.all(
      ids.slice(i, i + READS_AT_ONCE).map(async (id) => {
        const response = await fetch(`${service.url}${WRITE}/${id}`, { headers });
        await response.text();
        if (response.status !== 200) throw new Error(`GET ${WRITE}/${id} answered ${response.status}`);
      }),
    );
  }
}

/** Scenario 4b. */
export const handoffFullCacheScenario: Scenario = {
  id: 'handoff-full-cache',
  entries: () => [{ name: NAME, baseline: BASELINE, target: `≥ ${TARGETS.final.toFixed(2)}` }],
  run(context) {
    return withScratchService(context, 'handoff-full-cache', async (service, db) => {
      requireRoute(service, 'GET', `${WRITE}/{handoff_id}`);
      const records = await writeRecords(service);
      // The others first, the polled one last: it is then the most recent of a full cache.
      await readAll(service, await storeFinalRecords(db.url, CAPACITY - 1), records.headers);
      await readAll(service, [records.finalId], records.headers);
      return using(startBaseline('bare-json.ts', { BODY: records.finalBody }), async (baseline) => {
        const [measured, base] = (await compare(context, [
          readSide('service handoff GET final, full cache', service, records, true),
          baselineSide(baseline.url, records.finalId),
        ])) as [SideResult, SideResult];
        return [
          ratioEntry({
            name: NAME,
            service: measured,
            baseline: { name: BASELINE, rps: base.rps, errors: base.errors },
            minRatio: TARGETS.final,
          }),
        ];
      });
    });
  },
};
