/**
 * Scenario 8: GET /api/v1/calls?limit=50 on PostgreSQL with a company holding BENCH_LIST_ROWS calls (1
 * million by default), one connection (BENCH_GROWTH_CONNECTIONS), so latency is the cost of a page: the
 * first page and a page 90 % deep (keyset: it should cost what the first does), unfiltered, with one filter
 * (`product_id`) and with a tag filter (`tag=team:blue`, 10 % of the calls). First and deep pages alternate
 * in short slices, so both see the same background load of a shared machine.
 */
import { encodeCursor } from '../../src/domain/calls/list-query.ts';
import { fillConversations, fillTags } from '../lib/bulk-load.ts';
import type { ResponseCheck } from '../lib/load.ts';
import { withClient } from '../lib/postgres.ts';
import type { ScenarioEntry } from '../lib/report.ts';
import type { Settings } from '../lib/settings.ts';
import { shortCount } from './growth.ts';
import { DEPTH, firstVsDeep, PAGE_TARGETS } from './pages.ts';
import { type PlannedEntry, requireRoute, type Scenario, withScratchService } from './scenario.ts';

const PATH = '/api/v1/calls';

/** The three lists measured: their name and query (besides limit and cursor). */
const LISTS = (productId: number) => [
  { id: 'all', label: 'no filter', query: '' },
  { id: 'product', label: 'product_id filter', query: `&product_id=${productId}` },
  { id: 'tag', label: 'tag=team:blue filter', query: '&tag=team:blue' },
];

const entryNames = (settings: Settings) => {
  const rows = shortCount(settings.listRows);
  const how = `PostgreSQL, ${rows} calls, ${settings.growthConnections} conn.`;
  return {
    deep: (label: string) =>
      `8 list: limit=50 ${label}, page ${DEPTH * 100}% deep vs first page, p99 (${how})`,
    first: (label: string) => `8 list: limit=50 ${label}, first page p50 (${how})`,
  };
};

const entries = (settings: Settings): PlannedEntry[] => {
  const names = entryNames(settings);
  return LISTS(0).flatMap(({ id, label }) => [
    {
      name: names.deep(label),
      baseline: `first page, ${label}`,
      target: PAGE_TARGETS.deep,
    },
    ...(id === 'all' ? [] : [{ name: names.first(label), baseline: '—', target: PAGE_TARGETS.first }]),
  ]);
};

/** A full page of 50 calls. */
const check: ResponseCheck = (status, body) => status === 200 && (JSON.parse(body).calls?.length ?? 0) === 50;

/** The cursor after the call at `offset` in the list's order (newest start_time first, then id). */
function cursorAt(databaseUrl: string, offset: number): Promise<string> {
  return withClient(databaseUrl, async (client) => {
    const { rows } = await client.query<{ start_time: number; id: string }>(
      'select start_time, id from conversations order by start_time desc, id desc offset $1 limit 1',
      [offset],
    );
    const row = rows[0];
    if (!row) throw new Error(`no call at offset ${offset}`);
    return encodeCursor({ startTime: Number(row.start_time), id: row.id });
  });
}

/** Scenario 8. */
export const callsListScenario: Scenario = {
  id: 'calls-list',
  entries,
  run(context) {
    const { settings } = context;
    return withScratchService(context, 'calls-list', async (service, db) => {
      requireRoute(service, 'GET', PATH);
      const owner = { agentEmail: service.agentEmail, productId: service.productId };
      const stored = await fillConversations(db.url, owner, settings.listRows, (m) => context.log(m));
      await fillTags(db.url, 10, (m) => context.log(m));
      // Deep in the list, yet with far more than a page of blue calls after it.
      const cursor = await cursorAt(db.url, Math.floor(stored * DEPTH));
      const names = entryNames(settings);
      const headers = { authorization: `Bearer ${service.readerKey}` };
      const out: ScenarioEntry[] = [];
      for (const { id, label, query } of LISTS(service.productId)) {
        out.push(
          ...(await firstVsDeep(context, service, {
            label,
            firstLabel: 'first page',
            firstPath: `${PATH}?limit=50${query}`,
            deepPath: `${PATH}?limit=50${query}&cursor=${cursor}`,
            headers,
            check,
            deepName: names.deep(label),
            firstName: id === 'all' ? undefined : names.first(label),
          })),
        );
      }
      return out;
    });
  },
};
