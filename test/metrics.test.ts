/**
 * GET /metrics: Prometheus text on a port of its own (METRICS_PORT), never on the API's; counters move with
 * the requests, uploads and long polls a real listening service answers, and the queue is read at scrape.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../src/config/config.ts';
import { type RunningService, startService } from '../src/server.ts';
import { makeCompany, type TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, createPostgresDatabase, type Harness } from './helpers/harness.ts';
import { issueTestUpload, pathOf } from './helpers/media.ts';

/** The value of one series in a scrape, or undefined when absent. */
function seriesValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

for (const backend of BACKENDS) {
  describe(`GET /metrics on METRICS_PORT (${backend})`, () => {
    let running: RunningService;
    let dataDir: string;
    let dropDatabase: (() => Promise<void>) | undefined;
    let c: TestCompany;
    before(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'cqs-metrics-'));
      let databaseUrl: string | undefined;
      if (backend === 'postgres') {
        const pgDb = await createPostgresDatabase();
        databaseUrl = pgDb.url;
        dropDatabase = pgDb.drop;
      }
      const config = loadConfig({
        PORT: '0',
        METRICS_PORT: '0',
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'silent',
        CQS_BOOTSTRAP: 'false',
        WORKER: 'false',
        DB_POOL_MAX: '3',
        ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      });
      running = await startService(config, () => {});
      c = await makeCompany(running.services.database.db);
    });
    after(async () => {
      await running?.stop();
      await dropDatabase?.();
      await rm(dataDir, { recursive: true, force: true });
    });

    const scrape = async () => {
      assert.ok(running.metricsUrl, 'the service reports where its metrics are');
      const res = await fetch(`${running.metricsUrl}/metrics`);
      assert.equal(res.status, 200);
      assert.match(String(res.headers.get('content-type')), /^text\/plain; version=0\.0\.4/);
      return res.text();
    };
    const api = (path: string, init: RequestInit = {}, key = c.key) =>
      fetch(`${running.url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) },
      });

    it('serves the metrics on their own port, and not on the API port', async () => {
      assert.notEqual(new URL(running.metricsUrl as string).port, new URL(running.url).port);
      assert.equal((await fetch(`${running.url}/metrics`)).status, 404);
      assert.equal((await fetch(`${running.metricsUrl}/other`)).status, 404);
      const text = await scrape();
      for (const name of [
        'nodejs_eventloop_lag_seconds',
        'cqs_handoff_long_polls_waiting',
        'cqs_upload_bytes_received_total',
        'cqs_webhook_deliveries_pending',
        'cqs_webhook_delivery_oldest_pending_age_seconds',
      ]) {
        assert.match(text, new RegExp(`^${name} `, 'm'), name);
      }
      if (backend === 'postgres') {
        assert.equal(seriesValue(text, 'cqs_db_pool_max'), 3, 'the pool bound is DB_POOL_MAX');
        assert.ok((seriesValue(text, 'cqs_db_pool_connections') ?? 0) >= 1, 'the pool is shown');
        assert.notEqual(seriesValue(text, 'cqs_db_pool_idle'), undefined);
        assert.equal(seriesValue(text, 'cqs_db_pool_waiting'), 0);
      }
    });

    it('counts requests by route pattern and status, with their latency', async () => {
      const before = await scrape();
      const ok = 'cqs_http_requests_total{method="GET",route="/api/v1/product/list",status="200"}';
      const missing = 'cqs_http_requests_total{method="GET",route="/api/v1/calls/:id",status="403"}';
      const unknownId = '00000000-0000-4000-8000-00000000abcd';
      for (let i = 0; i < 3; i++) assert.equal((await api('/api/v1/product/list')).status, 200);
      // The admin key lacks calls:read: a 403, counted under the route pattern.
      assert.equal((await api(`/api/v1/calls/${unknownId}`)).status, 403);
      assert.equal((await api('/no/such/path')).status, 404);
      const text = await scrape();
      assert.equal((seriesValue(text, ok) ?? 0) - (seriesValue(before, ok) ?? 0), 3);
      assert.equal((seriesValue(text, missing) ?? 0) - (seriesValue(before, missing) ?? 0), 1);
      assert.ok(!text.includes(unknownId), 'a raw URL never becomes a label');
      assert.ok(!text.includes('/no/such/path'));
      assert.match(text, /^cqs_http_requests_total\{method="GET",route="unmatched",status="404"\} \d+/m);
      const count =
        'cqs_http_request_duration_seconds_count{method="GET",route="/api/v1/product/list",status="200"}';
      assert.equal((seriesValue(text, count) ?? 0) - (seriesValue(before, count) ?? 0), 3);
      assert.match(
        text,
        /^cqs_http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/api\/v1\/product\/list",status="200"\} \d+/m,
      );
    });

    it('counts the 400 of a URL no route can read (a malformed percent-encoding) as unmatched', async () => {
      const series = 'cqs_http_requests_total{method="GET",route="unmatched",status="400"}';
      const before = seriesValue(await scrape(), series) ?? 0;
      for (const path of ['/api/v1/call-handoff/%ZZ', '/api/v1/calls/%E0%A4%A']) {
        assert.equal((await api(path)).status, 400);
      }
      assert.equal((seriesValue(await scrape(), series) ?? 0) - before, 2);
    });

    it('shows the queue per kind: depth and the age of the oldest job', async () => {
      const { db } = running.services.database;
      await running.services.queue.enqueue(db, { kind: 'metrics.test', companyId: c.id });
      await running.services.queue.enqueue(db, { kind: 'metrics.test', companyId: c.id });
      await sleep(1100);
      const text = await scrape();
      assert.equal(seriesValue(text, 'cqs_queue_jobs{kind="metrics.test"}'), 2);
      assert.equal(seriesValue(text, 'cqs_queue_dead_jobs{kind="metrics.test"}'), 0);
      assert.ok((seriesValue(text, 'cqs_queue_oldest_job_age_seconds{kind="metrics.test"}') ?? 0) >= 1);
    });

    it('counts a job queued to run later as waiting only from its time on', async () => {
      const { db } = running.services.database;
      await running.services.queue.enqueue(db, {
        kind: 'metrics.later',
        companyId: c.id,
        delaySeconds: 3600,
      });
      await sleep(1100);
      const text = await scrape();
      assert.equal(seriesValue(text, 'cqs_queue_jobs{kind="metrics.later"}'), 1);
      assert.equal(seriesValue(text, 'cqs_queue_oldest_job_age_seconds{kind="metrics.later"}'), 0);
    });

    it('counts the bytes of an upload and the long polls waiting', async () => {
      const before = seriesValue(await scrape(), 'cqs_upload_bytes_received_total') ?? 0;
      const upload = await issueTestUpload({ services: running.services } as unknown as Harness, c);
      const body = new Uint8Array(4096);
      const put = await fetch(`${running.url}${pathOf(upload.upload_url)}`, {
        method: 'PUT',
        headers: { 'content-type': upload.upload_content_type },
        body,
      });
      assert.equal(put.status, 200, await put.text());
      assert.equal((seriesValue(await scrape(), 'cqs_upload_bytes_received_total') ?? 0) - before, 4096);

      const created = await api(
        '/api/v1/call-handoff',
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' },
        c.writerKey,
      );
      assert.equal(created.status, 201);
      const { handoff_id: id } = (await created.json()) as { handoff_id: string };
      const etag = String(created.headers.get('etag'));
      const waiting = api(`/api/v1/call-handoff/${id}?wait=10`, { headers: { 'if-none-match': etag } });
      let seen = 0;
      for (let i = 0; i < 100 && seen === 0; i++) {
        seen = seriesValue(await scrape(), 'cqs_handoff_long_polls_waiting') ?? 0;
        if (seen === 0) await sleep(20);
      }
      assert.equal(seen, 1, 'the waiting long poll is shown');
      const patched = await api(
        `/api/v1/call-handoff/${id}`,
        { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"metadata":{"a":1}}' },
        c.writerKey,
      );
      assert.equal(patched.status, 200);
      assert.equal((await waiting).status, 200);
      assert.equal(seriesValue(await scrape(), 'cqs_handoff_long_polls_waiting'), 0);
    });
  });
}
