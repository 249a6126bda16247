/** Scenario 1: GET /api/v1/product/list vs a bare node:http server answering the same JSON. */
import { startBaseline } from '../lib/baseline.ts';
import type { ResponseCheck } from '../lib/load.ts';
import { ratioEntry } from '../lib/report.ts';
import { BENCH } from '../lib/service.ts';
import type { Settings } from '../lib/settings.ts';
import { readDbLabel, startReadService } from './read-service.ts';
import { compare, type Scenario, type SideResult, using } from './scenario.ts';

const PATH = '/api/v1/product/list';
const BASELINE = 'bare node:http, fixed JSON';

const check: ResponseCheck = (status, body) => {
  if (status !== 200) return false;
  try {
    const products = (JSON.parse(body) as { products?: { id?: unknown }[] }).products;
    return Array.isArray(products) && products.length === BENCH.productCount;
  } catch {
    return false;
  }
};

const entries = (settings: Settings) => [
  { name: `1 GET product/list (${readDbLabel({ settings })})`, baseline: BASELINE, target: '≥ 0.50' },
];

/** Scenario 1. */
export const productsScenario: Scenario = {
  id: 'products',
  entries,
  async run(context) {
    const { name } = entries(context.settings)[0] as { name: string };
    return using(startReadService(context, 'products'), async (service) => {
      const headers = { authorization: `Bearer ${service.callsKey}` };
      const body = await (await fetch(`${service.url}${PATH}`, { headers })).text();
      return using(startBaseline('bare-json.ts', { BODY: body }), async (baseline) => {
        const [measured, base] = (await compare(context, [
          {
            label: 'service product/list',
            pid: service.pid,
            spec: { url: service.url, path: PATH, headers, check },
          },
          { label: BASELINE, spec: { url: baseline.url, path: PATH, check } },
        ])) as [SideResult, SideResult];
        return [
          ratioEntry({
            name,
            service: measured,
            baseline: { name: BASELINE, rps: base.rps, errors: base.errors },
            minRatio: 0.5,
          }),
        ];
      });
    });
  },
};
