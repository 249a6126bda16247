/** Scenario 1: GET /api/v1/product/list vs a bare node:http server answering the same JSON. */
import { BARE_JSON_BASELINE, startBaseline } from '../lib/baseline.ts';
import type { ResponseCheck } from '../lib/load.ts';
import { ratioEntry, type ScenarioEntry, unmeasuredEntry } from '../lib/report.ts';
import { BENCH } from '../lib/service.ts';
import type { DbKind, Settings } from '../lib/settings.ts';
import { dbLabel, startReadServices } from './read-service.ts';
import { compare, type PlannedEntry, type Scenario, type Side, using } from './scenario.ts';

const PATH = '/api/v1/product/list';
const BASELINE = BARE_JSON_BASELINE;
const TARGET = '≥ 0.50';

const check: ResponseCheck = (status, body) => {
  if (status !== 200) return false;
  try {
    const products = (JSON.parse(body) as { products?: { id?: unknown }[] }).products;
    return Array.isArray(products) && products.length === BENCH.productCount;
  } catch {
    return false;
  }
};

const entryName = (db: DbKind) => `1 GET product/list (${dbLabel(db)})`;
const entries = (settings: Settings): PlannedEntry[] =>
  settings.readDbs.map((db) => ({ name: entryName(db), baseline: BASELINE, target: TARGET }));

/** Scenario 1. */
export const productsScenario: Scenario = {
  id: 'products',
  entries,
  async run(context) {
    return using(startReadServices(context, 'products'), async ({ services }) => {
      const running = services.flatMap((s) => ('service' in s ? [{ db: s.db, service: s.service }] : []));
      const first = running[0];
      if (!first)
        return services.map((s) =>
          unmeasuredEntry(entryName(s.db), BASELINE, TARGET, 'skipped' in s ? s.skipped : ''),
        );
      const headers = (key: string) => ({ authorization: `Bearer ${key}` });
      const body = await (
        await fetch(`${first.service.url}${PATH}`, { headers: headers(first.service.callsKey) })
      ).text();
      return using(startBaseline('bare-json.ts', { BODY: body }), async (baseline) => {
        const sides: Side[] = running.map(({ db, service }) => ({
          label: `service product/list, ${dbLabel(db)}`,
          pid: service.pid,
          spec: { url: service.url, path: PATH, headers: headers(service.callsKey), check },
        }));
        const results = await compare(context, [
          ...sides,
          { label: BASELINE, spec: { url: baseline.url, path: PATH, check } },
        ]);
        const base = results[results.length - 1];
        if (!base) throw new Error('no baseline result');
        return services.map((s): ScenarioEntry => {
          const i = running.findIndex((r) => r.db === s.db);
          const measured = results[i];
          if (!measured || 'skipped' in s)
            return unmeasuredEntry(entryName(s.db), BASELINE, TARGET, 'skipped' in s ? s.skipped : 'failed');
          return ratioEntry({
            name: entryName(s.db),
            service: measured,
            baseline: { name: BASELINE, rps: base.rps, errors: base.errors },
            minRatio: 0.5,
          });
        });
      });
    });
  },
};
