/**
 * A stopping process (SIGTERM, SIGINT: `stop()`) stops taking requests at once and waits for its jobs in
 * progress for at most SHUTDOWN_TIMEOUT. It used to stop the worker first: a job waiting on a slow peer (here a
 * webhook receiver that never answers, with WEBHOOK_TIMEOUT at 60 s) kept the process serving, and ready,
 * until the job ended.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../src/config/config.ts';
import { type RunningService, startService } from '../src/server.ts';
import { within } from './helpers/eventually.ts';
import { makeCompany } from './helpers/fixtures.ts';

describe('stopping a process with a job in progress', () => {
  const sockets = new Set<Socket>();
  // A webhook receiver that takes the request and never answers.
  const silent = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', () => {});
  });
  let dataDir: string;
  let running: RunningService | undefined;
  before(async () => {
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    dataDir = await mkdtemp(join(tmpdir(), 'cqs-shutdown-'));
  });
  after(async () => {
    await running?.stop();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
    await rm(dataDir, { recursive: true, force: true });
  });

  it('refuses new requests at once and closes within SHUTDOWN_TIMEOUT', async () => {
    running = await startService(
      loadConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'silent',
        CQS_BOOTSTRAP: 'false',
        WORKER: 'true',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_TIMEOUT: '60',
        SHUTDOWN_TIMEOUT: '2',
      }),
      () => {},
    );
    const service = running;
    const c = await makeCompany(service.services.database.db);
    const { key } = await c.addKey(c.admin.id, ['webhooks']);
    const post = (path: string, body: unknown, auth = c.key) =>
      fetch(`${service.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const port = (silent.address() as { port: number }).port;
    assert.equal((await post('/api/v1/webhooks', { url: `http://127.0.0.1:${port}/hook` }, key)).status, 201);
    const created = await post('/api/v1/call/create', {
      agent_email: c.agent.email,
      product_id: c.productId,
      conversation_id: 'during-shutdown',
    });
    assert.equal(created.status, 200);
    // The delivery job is now waiting on the receiver.
    await within(15_000, 'the delivery reaches the receiver', () => sockets.size > 0);

    const started = performance.now();
    const stopped = service.stop();
    await sleep(300);
    const during = await fetch(`${service.url}/readyz`).then(
      (res) => res.status,
      () => 'refused',
    );
    assert.notEqual(during, 200, 'a stopping process is not ready');
    const late = await Promise.race([
      stopped.then(() => 'stopped'),
      sleep(20_000).then(() => 'still running'),
    ]);
    const seconds = (performance.now() - started) / 1000;
    assert.equal(late, 'stopped');
    assert.ok(seconds < 10, `stopped after ${seconds.toFixed(1)} s`);
    running = undefined;
  });
});
