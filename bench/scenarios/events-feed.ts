/**
 * Scenario 12: the event feed's pull side, GET /api/v1/events, on PostgreSQL with a company whose log holds
 * BENCH_LIST_ROWS events (1 million by default), one connection (BENCH_GROWTH_CONNECTIONS), so latency is
 * the cost of a poll: a page of 100 from the oldest event and one 90 % deep (a position is an index key:
 * it should cost what the first does), the same with a type filter that 1 % of the events match, a poll
 * at the head of the log where nothing new has come (what a caught-up reader sends most), and a poll from
 * the oldest for a type no event has (the most a type filter can cost: an empty page after the whole log).
 * First and deep pages alternate in short slices, so both see the same background load of a shared machine.
 */
import { encodeCursor } from '../../src/domain/events/feed.ts';
import { fillEvents, RARE_EVENT_EVERY, RARE_EVENT_TYPE } from '../lib/bulk-load.ts';
import type { ResponseCheck } from '../lib/load.ts';
import { withClient } from '../lib/postgres.ts';
import { latencyEntry, type ScenarioEntry } from '../lib/report.ts';
import type { Settings } from '../lib/settings.ts';
import { shortCount } from './growth.ts';
import { DEPTH, firstVsDeep, MAX_PAGE_P50_MS, PAGE_TARGETS, pageSpec } from './pages.ts';
import { measure, type PlannedEntry, requireRoute, type Scenario, withScratchService } from './scenario.ts';

const PATH = '/api/v1/events';
const LIMIT = 100;

/** The two feeds measured: their name and query (besides limit and after). */
const FEEDS = [
  { label: 'every type', query: '' },
  {
    label: `type=${RARE_EVENT_TYPE} (${100 / RARE_EVENT_EVERY} % of the events)`,
    query: `&type=${RARE_EVENT_TYPE}`,
  },
];

/** A type none of the bulk events has: a poll for it reads the whole log unless an index has the type. */
const ABSENT_TYPE = 'webhook.disabled';

const entryNames = (settings: Settings) => {
  const how = `PostgreSQL, ${shortCount(settings.listRows)} events, ${settings.growthConnections} conn.`;
  return {
    deep: (label: string) =>
      `12 events: limit=${LIMIT} ${label}, page ${DEPTH * 100}% deep vs the oldest, p99 (${how})`,
    first: (label: string) => `12 events: limit=${LIMIT} ${label}, page from the oldest, p50 (${how})`,
    head: `12 events: poll at the head, nothing new, p50 (${how})`,
    absent: `12 events: type=${ABSENT_TYPE} (no event has it) from the oldest, p50 (${how})`,
  };
};

const entries = (settings: Settings): PlannedEntry[] => {
  const names = entryNames(settings);
  return [
    ...FEEDS.flatMap(({ label }) => [
      {
        name: names.deep(label),
        baseline: `page from the oldest, ${label}`,
        target: PAGE_TARGETS.deep,
      },
      { name: names.first(label), baseline: '—', target: PAGE_TARGETS.first },
    ]),
    { name: names.head, baseline: '—', target: PAGE_TARGETS.first },
    { name: names.absent, baseline: '—', target: PAGE_TARGETS.first },
  ];
};

/** A page of `size` events and a cursor to go on from. */
const pageOf =
  (size: number): ResponseCheck =>
  (status, body) => {
    if (status !== 200) return false;
    const page = JSON.parse(body) as { events?: unknown[]; next_cursor?: unknown };
    return page.events?.length === size && typeof page.next_cursor === 'string';
  };

/** The cursor after the event at `offset` in the log's order, or after the last event when `offset` is omitted. */
function cursorAt(databaseUrl: string, offset?: number): Promise<string> {
  return withClient(databaseUrl, async (client) => {
    const { rows } = await client.query<{ txid: string; seq: string }>(
      offset === undefined
        ? 'select txid::text, seq from events order by txid desc, seq desc limit 1'
        : 'select txid::text, seq from events order by txid, seq offset $1 limit 1',
      offset === undefined ? [] : [offset],
    );
    const row = rows[0];
    if (!row) throw new Error(`no event at offset ${offset ?? 'last'}`);
    return encodeCursor({ txid: row.txid, seq: Number(row.seq) });
  });
}

/** Scenario 12. */
export const eventsFeedScenario: Scenario = {
  id: 'events-feed',
  entries,
  run(context) {
    const { settings } = context;
    return withScratchService(context, 'events-feed', async (service, db) => {
      requireRoute(service, 'GET', PATH);
      const owner = { agentEmail: service.agentEmail, productId: service.productId };
      const stored = await fillEvents(db.url, owner, settings.listRows, (m) => context.log(m));
      const deepCursor = await cursorAt(db.url, Math.floor(stored * DEPTH));
      const names = entryNames(settings);
      const headers = { authorization: `Bearer ${service.eventsKey}` };
      const out: ScenarioEntry[] = [];
      for (const { label, query } of FEEDS) {
        out.push(
          ...(await firstVsDeep(context, service, {
            label,
            firstLabel: 'from the oldest',
            firstPath: `${PATH}?limit=${LIMIT}${query}`,
            deepPath: `${PATH}?limit=${LIMIT}${query}&after=${deepCursor}`,
            headers,
            check: pageOf(LIMIT),
            deepName: names.deep(label),
            firstName: names.first(label),
          })),
        );
      }
      // Empty pages: at the head of the log, and of a type no event has (from the oldest).
      const headCursor = await cursorAt(db.url);
      const empty = [
        { name: names.head, label: 'poll at the head', query: `&after=${headCursor}` },
        { name: names.absent, label: `${ABSENT_TYPE} from the oldest`, query: `&type=${ABSENT_TYPE}` },
      ];
      for (const { name, label, query } of empty) {
        const result = await measure(context, {
          label,
          pid: service.pid,
          spec: pageSpec(context, service, `${PATH}?limit=${LIMIT}${query}`, headers, pageOf(0)),
        });
        out.push(latencyEntry({ name, service: result, which: 'p50_ms', maxMs: MAX_PAGE_P50_MS }));
      }
      return out;
    });
  },
};
