/**
 * `node bench/write-paths.ts [CONNECTIONS [postgres|embedded]]`: requests a second of the write paths no
 * scenario of `npm run bench` times, each for 8 s after a 2 s warm-up on CONNECTIONS connections (1): tags
 * written to one call by call/add_tags, by POST /calls/{id}/tags and by the deprecated live endpoint
 * data/sale, then handoff record creates, and merges into one record. Not a
 * scenario (it judges nothing): one service on a scratch PostgreSQL database or a new embedded one. Every
 * answer is checked. Run it against another checkout with BENCH_SERVICE_DIR, interleaved, to compare code;
 * docs/performance.md has its figures.
 */
import { runLoad } from './lib/load.ts';
import { createScratchDatabase } from './lib/postgres.ts';
import { requestJson, startBenchService } from './lib/service.ts';
import { WRITE as HANDOFFS } from './scenarios/handoff.ts';

const connections = Number(process.argv[2] ?? 1);
const db = process.argv[3] ?? 'postgres';
if (!Number.isInteger(connections) || connections < 1 || (db !== 'postgres' && db !== 'embedded')) {
  process.stderr.write('usage: node bench/write-paths.ts [CONNECTIONS [postgres|embedded]]\n');
  process.exit(2);
}
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const scratch = db === 'postgres' ? await createScratchDatabase(adminUrl, 'writepaths') : undefined;
const service = await startBenchService({ name: 'write-paths', databaseUrl: scratch?.url });

/** Runs one path and prints its rate and latency. */
async function measure(
  label: string,
  key: string,
  method: 'POST' | 'PATCH',
  path: string,
  body: () => string,
) {
  const status = label.startsWith('handoff create') ? 201 : 200;
  const result = await runLoad({
    url: service.url,
    path,
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    request: () => ({ body: body(), check: (s) => s === status }),
    connections,
    durationS: 8,
    warmupS: 2,
  });
  process.stdout.write(
    `${label} (${db}, ${connections} conn.): ${result.rps.toFixed(0)} a second, p50 ${result.p50_ms.toFixed(2)} ms, ` +
      `p99 ${result.p99_ms.toFixed(2)} ms, ${result.errors} errors\n`,
  );
}

try {
  const conversation = 'write-paths-1';
  await requestJson(
    service,
    service.callsKey,
    'POST',
    '/api/v1/call/create',
    { agent_email: service.agentEmail, product_id: service.productId, conversation_id: conversation },
    200,
  );
  const listed = await fetch(`${service.url}/api/v1/calls?conversation_id=${conversation}`, {
    headers: { authorization: `Bearer ${service.readerKey}` },
  });
  const callId = ((await listed.json()) as { calls: { id: string }[] }).calls[0]?.id;
  if (!callId) throw new Error('the call just created is not listed');
  const tags = JSON.stringify([{ key: 'score', type: 'integer', value: 7 }]);
  await measure('call/add_tags on one call', service.callsKey, 'POST', '/api/v1/call/add_tags', () =>
    JSON.stringify({
      agent_email: service.agentEmail,
      conversation_id: conversation,
      tags: JSON.parse(tags),
    }),
  );
  await measure(
    'calls/{id}/tags on one call',
    service.callsKey,
    'POST',
    `/api/v1/calls/${callId}/tags`,
    () => `{"tags":${tags}}`,
  );
  await measure(
    'live data/sale on one call',
    service.callsKey,
    'POST',
    `/api/v1/live/${conversation}/data/sale`,
    () => '{"closed":true}',
  );
  await measure('handoff create', service.writerKey, 'POST', HANDOFFS, () =>
    JSON.stringify({ metadata: { intent: 'billing', verified: true } }),
  );
  const record = await requestJson(service, service.writerKey, 'POST', HANDOFFS, { metadata: {} }, 201);
  let n = 0;
  await measure(
    'handoff merge into one record',
    service.writerKey,
    'PATCH',
    `${HANDOFFS}/${record.handoff_id}`,
    () => JSON.stringify({ metadata: { [`key${n % 50}`]: n++ } }),
  );
} finally {
  await service.stop();
  await scratch?.drop();
}
