/**
 * Scenario 9: GET /api/v1/calls/{id} of a call with a 1,000-segment transcript (140 kB of JSON; the answer,
 * with the analysis made of it, 185 kB), on PostgreSQL when it answers, else the embedded database (the row's
 * name then says so, so that its peak RSS answers to the embedded bound), under BENCH_CONNECTIONS. No target
 * was set for it: the figures are reported, and the entry is met when every answer was the whole call.
 */
import type { ResponseCheck } from '../lib/load.ts';
import { createScratchDatabase, type ScratchDatabase } from '../lib/postgres.ts';
import type { ScenarioEntry } from '../lib/report.ts';
import { startBenchService } from '../lib/service.ts';
import { CREATE_PATH } from './create.ts';
import { measure, requireRoute, type Scenario, SkipScenario, using } from './scenario.ts';

const SEGMENTS = 1000;
const NAME = `9 call detail: GET /api/v1/calls/{id} with a ${SEGMENTS}-segment transcript`;
/** The row's name on the embedded database (on PostgreSQL, NAME as it always was). */
const EMBEDDED_NAME = `${NAME} (embedded db)`;
const TARGET = 'reported (no target); every answer whole';

function transcript() {
  return Array.from({ length: SEGMENTS }, (_, i) => ({
    role: i % 2 === 0 ? 'agent' : 'customer',
    text: `Segment ${i}: a sentence of a realistic length, said on a support call about an order.`,
    start: i * 3,
    stop: i * 3 + 2.5,
  }));
}

/** Scenario 9. */
export const callDetailScenario: Scenario = {
  id: 'call-detail',
  entries: () => [{ name: NAME, baseline: '—', target: TARGET }],
  async run(context) {
    const { settings } = context;
    let db: ScratchDatabase | undefined;
    if (context.postgres) db = await createScratchDatabase(settings.postgresUrl, 'call-detail');
    try {
      return await using(
        startBenchService({
          name: 'call-detail',
          databaseUrl: db?.url,
          cpuProfileDir: settings.cpuProfileDir,
        }),
        async (service): Promise<ScenarioEntry[]> => {
          requireRoute(service, 'GET', '/api/v1/calls/{id}');
          const created = await fetch(`${service.url}${CREATE_PATH}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${service.callsKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              agent_email: service.agentEmail,
              product_id: service.productId,
              conversation_id: 'detail-1000',
              transcript: transcript(),
            }),
          });
          if (created.status !== 200) throw new SkipScenario(`call/create answered ${created.status}`);
          const headers = { authorization: `Bearer ${service.readerKey}` };
          const found = await fetch(`${service.url}/api/v1/calls?conversation_id=detail-1000`, { headers });
          const id = ((await found.json()) as { calls: { id: string }[] }).calls[0]?.id;
          if (!id) throw new Error('the call is not listed');
          const check: ResponseCheck = (status, body) =>
            status === 200 && JSON.parse(body).transcript?.length === SEGMENTS;
          const result = await measure(context, {
            label: `call detail (${db ? 'PostgreSQL' : 'embedded'}, ${settings.connections} conn.)`,
            pid: service.pid,
            spec: { url: service.url, path: `/api/v1/calls/${id}`, headers, check },
          });
          return [
            {
              name: db ? NAME : EMBEDDED_NAME,
              rps: Math.round(result.rps * 10) / 10,
              p50_ms: Math.round(result.p50_ms * 100) / 100,
              p99_ms: Math.round(result.p99_ms * 100) / 100,
              errors: result.errors,
              idle_rss_mb: result.idle_rss_mb === undefined ? null : Math.round(result.idle_rss_mb * 10) / 10,
              peak_rss_mb: result.peak_rss_mb === undefined ? null : Math.round(result.peak_rss_mb * 10) / 10,
              baseline: { name: '—', rps: null },
              ratio: null,
              target: TARGET,
              met: result.errors === 0,
            },
          ];
        },
      );
    } finally {
      await db?.drop();
    }
  },
};
