/**
 * Scenario 4: GET /api/v1/call-handoff/{id} of a final record and of a partial one vs a bare node:http server
 * answering the final record's JSON. The records are written through the writer endpoints first.
 */
import { BARE_JSON_BASELINE, startBaseline } from '../lib/baseline.ts';
import type { ResponseCheck } from '../lib/load.ts';
import { ratioEntry, type ScenarioEntry, unmeasuredEntry } from '../lib/report.ts';
import { type BenchService, requestJson } from '../lib/service.ts';
import type { DbKind, Settings } from '../lib/settings.ts';
import { dbLabel, type ReadService, startReadServices } from './read-service.ts';
import { compare, type PlannedEntry, requireRoute, type Scenario, type Side, using } from './scenario.ts';

/** The writer's path, and GET's without the id. */
export const WRITE = '/api/v1/call-handoff';
const READ = '/api/v1/call-handoff/{handoff_id}';
const FINALIZE = '/api/v1/call-handoff/{handoff_id}/finalize';
/** The baseline of every handoff read. */
export const BASELINE = BARE_JSON_BASELINE;

/** Metadata of a realistic size: what a voice bot gathers during a call. */
const METADATA = {
  caller_number: '+4930123456',
  intent: 'change_delivery_address',
  language: 'de-DE',
  order_number: '4711-2093',
  verified: true,
  attempts: 2,
  queue: 'billing',
  summary: 'Caller wants the delivery address of an unshipped order changed; identity verified by PIN.',
  sentiment: { score: 0.62, label: 'positive' },
  transfer_reason: 'agent_required',
};

interface HandoffRecord {
  handoff_id?: unknown;
  final?: unknown;
  finalized_at?: unknown;
  metadata?: unknown;
}

/** A writer's request (the handoff:write key) answering the record. */
const call = (service: BenchService, method: string, path: string, body: unknown, expected: number) =>
  requestJson<HandoffRecord>(service, service.writerKey, method, path, body, expected);

/** A check of a GET answer: the record asked for, in the state expected, cacheable only when final. */
function recordCheck(id: string, final: boolean, checkHeaders: boolean): ResponseCheck {
  return (status, body, headers) => {
    if (status !== 200) return false;
    if (checkHeaders) {
      const cacheControl = String(headers['cache-control'] ?? '');
      if (final ? !headers.etag || cacheControl.includes('no-store') : !cacheControl.includes('no-store')) {
        return false;
      }
    }
    try {
      const record = JSON.parse(body) as HandoffRecord;
      return (
        record.handoff_id === id &&
        record.final === final &&
        (final ? typeof record.finalized_at === 'string' : record.finalized_at === null) &&
        typeof record.metadata === 'object'
      );
    } catch {
      return false;
    }
  };
}

const NAMES = { final: 'final', partial: 'partial' } as const;
/** The ratios a final and a partial read must reach. */
export const TARGETS = { final: 0.6, partial: 0.4 } as const;
const entryName = (db: DbKind, kind: keyof typeof NAMES) =>
  `4 GET call-handoff/{id}, ${kind} (${dbLabel(db)})`;
const entries = (settings: Settings): PlannedEntry[] =>
  settings.readDbs.flatMap((db) =>
    (['final', 'partial'] as const).map((kind) => ({
      name: entryName(db, kind),
      baseline: BASELINE,
      target: `≥ ${TARGETS[kind].toFixed(2)}`,
    })),
  );

/** Writes a partial record and a final one (created, patched, finalized); returns their ids and the final JSON. */
export async function writeRecords(service: BenchService) {
  const partial = await call(service, 'POST', WRITE, { metadata: { ...METADATA, verified: false } }, 201);
  const done = await call(
    service,
    'POST',
    WRITE,
    { metadata: { caller_number: METADATA.caller_number } },
    201,
  );
  const finalId = String(done.handoff_id);
  await call(service, 'PATCH', `${WRITE}/${finalId}`, { metadata: { intent: METADATA.intent } }, 200);
  await call(service, 'POST', `${WRITE}/${finalId}/finalize`, { metadata: METADATA }, 200);
  const headers = { authorization: `Bearer ${service.callsKey}` };
  const finalBody = await (await fetch(`${service.url}${WRITE}/${finalId}`, { headers })).text();
  return { partialId: String(partial.handoff_id), finalId, finalBody, headers };
}

/** The two records of a service. */
export type Records = Awaited<ReturnType<typeof writeRecords>>;

/** The bare server's side, answering the final record's JSON at the record's path (no headers to check). */
export function baselineSide(url: string, finalId: string): Side {
  return {
    label: BASELINE,
    spec: { url, path: `${WRITE}/${finalId}`, check: recordCheck(finalId, true, false) },
  };
}

/** A load side reading the service's final or partial record, each answer checked. */
export function readSide(label: string, service: BenchService, records: Records, final: boolean): Side {
  const id = final ? records.finalId : records.partialId;
  return {
    label,
    pid: service.pid,
    spec: {
      url: service.url,
      path: `${WRITE}/${id}`,
      headers: records.headers,
      check: recordCheck(id, final, true),
    },
  };
}

/** Scenario 4. */
export const handoffScenario: Scenario = {
  id: 'handoff',
  entries,
  async run(context) {
    return using(startReadServices(context, 'handoff'), async ({ services }) => {
      const running: { db: DbKind; service: BenchService; records: Records }[] = [];
      for (const s of services) {
        if (!('service' in s)) continue;
        requireRoute(s.service, 'POST', WRITE);
        requireRoute(s.service, 'GET', READ);
        requireRoute(s.service, 'POST', FINALIZE);
        running.push({ ...s, records: await writeRecords(s.service) });
      }
      const skipped = (s: ReadService) =>
        (['final', 'partial'] as const).map((kind) =>
          unmeasuredEntry(
            entryName(s.db, kind),
            BASELINE,
            `≥ ${TARGETS[kind].toFixed(2)}`,
            'skipped' in s ? s.skipped : 'failed',
          ),
        );
      const first = running[0];
      if (!first) return services.flatMap(skipped);
      return using(startBaseline('bare-json.ts', { BODY: first.records.finalBody }), async (baseline) => {
        const sides: Side[] = running.flatMap(({ db, service, records }) => [
          readSide(`service handoff GET final, ${dbLabel(db)}`, service, records, true),
          readSide(`service handoff GET partial, ${dbLabel(db)}`, service, records, false),
        ]);
        const finalId = first.records.finalId;
        const results = await compare(context, [...sides, baselineSide(baseline.url, finalId)]);
        const base = results[results.length - 1];
        if (!base) throw new Error('no baseline result');
        const baselineRow = { name: BASELINE, rps: base.rps, errors: base.errors };
        return services.flatMap((s): ScenarioEntry[] => {
          const i = running.findIndex((r) => r.db === s.db);
          const final = results[2 * i];
          const partial = results[2 * i + 1];
          if (i < 0 || !final || !partial) return skipped(s);
          return [
            ratioEntry({
              name: entryName(s.db, 'final'),
              service: final,
              baseline: baselineRow,
              minRatio: TARGETS.final,
            }),
            ratioEntry({
              name: entryName(s.db, 'partial'),
              service: partial,
              baseline: baselineRow,
              minRatio: TARGETS.partial,
            }),
          ];
        });
      });
    });
  },
};
