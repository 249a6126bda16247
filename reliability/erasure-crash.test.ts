/**
 * Erasure under SIGKILL (decision 26), on PGlite and PostgreSQL: the service as a child process erases calls
 * with recordings while it is killed at random moments. Afterwards no call is half erased (a call that is
 * readable still has every row and every object), every acknowledged erasure is complete, and once the
 * queue has run no stored object is left without its upload row (no orphan).
 *
 * Only the erasing process is a child (the one killed); the seed, the calls to erase and the checks run in
 * this process on the same database between kills, so that a cycle costs one start of `cqs serve`.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { callHandoffs, conversations, conversationTags, uploads } from '../src/adapters/db/schema.ts';
import { createMediaInfoProber } from '../src/adapters/probe/mediainfo.ts';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config/config.ts';
import { generateApiKey } from '../src/domain/access/api-keys.ts';
import { applySeed } from '../src/domain/access/seed.ts';
import { closeServices, openServices } from '../src/server.ts';
import type { Services } from '../src/services.ts';
import { jobHandlers } from '../src/worker/jobs.ts';
import { runDueJobs } from '../src/worker/worker.ts';
import { createPostgresDatabase } from '../test/helpers/harness.ts';
import { call, figure, rand, SHORT, serve, tempDir } from './lib.ts';

const CYCLES = SHORT ? 3 : 10;
const QUIET = { info() {}, warn() {}, error() {} };
const CALLS_PER_CYCLE = SHORT ? 12 : 30;

/** The seed: an admin who writes calls and handoff records and may erase, an agent, a product. */
async function seed(services: Services) {
  const keys = { calls: generateApiKey(), erase: generateApiKey(), writer: generateApiKey() };
  await applySeed(services.database.db, {
    companies: [
      {
        name: 'erase',
        users: [
          { ref: 'admin', email: 'admin@erase.test', role: 'admin' },
          { ref: 'agent', email: 'agent@erase.test', role: 'agent' },
        ],
        products: [{ name: 'QA', grant: ['agent'] }],
        api_keys: [
          { user: 'admin', scopes: ['calls'], key: keys.calls },
          { user: 'admin', scopes: ['calls:read', 'calls:delete'], key: keys.erase },
          { user: 'admin', scopes: ['handoff:write'], key: keys.writer },
        ],
      },
    ],
  });
  return keys;
}

/** A JSON request to the in-process app. */
async function send(app: FastifyInstance, method: 'GET' | 'POST', url: string, key: string, body?: unknown) {
  const r = await app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${key}` },
    ...(body !== undefined ? { payload: body as object } : {}),
  });
  return { status: r.statusCode, body: r.json() as Record<string, unknown> };
}

/** Makes a call with two stored recordings and a final handoff record, in process; returns its id. */
async function makeCall(
  app: FastifyInstance,
  keys: Awaited<ReturnType<typeof seed>>,
  productId: number,
  name: string,
): Promise<string> {
  for (const file of ['a.wav', 'b.wav']) {
    const r = await send(app, 'POST', '/api/v1/call/create', keys.calls, {
      agent_email: 'agent@erase.test',
      product_id: productId,
      conversation_id: name,
      transcript: [{ role: 'agent', text: 'x', start: 0, stop: 1 }],
      tags: [{ key: 'k', type: 'string', value: name }],
      filename: file,
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const url = new URL(r.body.upload_url as string);
    const put = await app.inject({
      method: 'PUT',
      url: `${url.pathname}${url.search}`,
      headers: { 'content-type': 'audio/wav' },
      payload: randomBytes(4096),
    });
    assert.equal(put.statusCode, 200, put.body);
  }
  const h = await send(app, 'POST', '/api/v1/call-handoff', keys.writer, { conversation_id: name });
  assert.equal(h.status, 201, JSON.stringify(h.body));
  const fin = await send(app, 'POST', `/api/v1/call-handoff/${h.body.handoff_id}/finalize`, keys.writer, {});
  assert.equal(fin.status, 200, JSON.stringify(fin.body));
  const list = await send(app, 'GET', `/api/v1/calls?conversation_id=${name}`, keys.erase);
  const id = (list.body.calls as { id: string }[])[0]?.id;
  assert.ok(id, `call ${name} is listed`);
  return id;
}

/** Makes the calls of one cycle in process, with the app built on `services`. */
async function makeCalls(services: Services, keys: Awaited<ReturnType<typeof seed>>, cycle: number) {
  const app = await buildApp(services, { logStream: new PassThrough().resume() });
  try {
    const products = await send(app, 'GET', '/api/v1/product/list', keys.calls);
    const productId = (products.body.products as { id: number }[])[0]?.id ?? 0;
    const ids: string[] = [];
    for (let i = 0; i < CALLS_PER_CYCLE; i++)
      ids.push(await makeCall(app, keys, productId, `c${cycle}-${i}`));
    return ids;
  } finally {
    await app.close();
  }
}

async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => relative(root, join(e.parentPath, e.name)));
}

for (const backend of ['pglite', 'postgres'] as const) {
  describe(`erasure under SIGKILL (${backend})`, {
    skip: backend === 'postgres' && !process.env.TEST_DATABASE_URL,
  }, () => {
    it(`never leaves a readable half-erased call or an orphaned object over ${CYCLES} kill cycles`, async () => {
      const dataDir = await tempDir('cqs-erase-crash-');
      const pgDb = backend === 'postgres' ? await createPostgresDatabase() : undefined;
      const env: Record<string, string> = {
        DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
        ...(pgDb ? { DATABASE_URL: pgDb.url } : {}),
      };
      const config = loadConfig({ ...env, WORKER: 'false', LOG_LEVEL: 'warn' });
      try {
        let services = await openServices(config);
        let keys: Awaited<ReturnType<typeof seed>>;
        let ids: string[];
        try {
          keys = await seed(services);
          ids = await makeCalls(services, keys, 0);
        } finally {
          await closeServices(services);
        }
        const acked = new Set<string>();
        const made = new Set<string>();
        let objectsAwaitingJob = 0;
        for (let n = 0; n < CYCLES; n++) {
          for (const id of ids) made.add(id);
          // Erase them all, four at a time, and kill the process part way.
          const s = await serve({ ...env, WORKER: 'false' });
          // The kill lands a few milliseconds after DELETE number killAt was sent. Four are in flight at
          // once, so from the fifth on at least one answer came back first (every cycle acknowledges some),
          // and the last is never sent (every cycle cuts some off).
          const killAt = rand(5, ids.length);
          let next = 0;
          let killed: Promise<void> | undefined;
          const worker = async () => {
            while (next < ids.length && !killed) {
              const id = ids[next++] as string;
              if (next === killAt) {
                killed = new Promise((r) => setTimeout(r, rand(0, 25))).then(() => s.kill());
              }
              const r = await call(s.port, 'DELETE', `/api/v1/calls/${id}`, keys.erase);
              if (r.status === 204) acked.add(id);
            }
          };
          await Promise.all([worker(), worker(), worker(), worker()]);
          await (killed ?? s.kill());

          // Look before the queue runs: no call is half there.
          services = await openServices(config);
          try {
            const db = services.database.db;
            const convs = new Set(
              (await db.select({ id: conversations.id }).from(conversations)).map((r) => r.id),
            );
            const ups = await db.select().from(uploads);
            const tags = await db.select().from(conversationTags);
            const handoffs = await db.select().from(callHandoffs);
            for (const id of ids) {
              const mine = ups.filter((u) => u.conversationUuid === id);
              if (convs.has(id)) {
                assert.ok(!acked.has(id), `call ${id} answered 204 but is still there`);
                assert.equal(mine.length, 2, `readable call ${id} lost an upload row`);
                for (const u of mine)
                  assert.ok(await services.storage.head(u.objectKey), `readable call ${id} lost an object`);
                assert.equal(tags.filter((t) => t.conversationUuid === id).length, 1);
                assert.equal(handoffs.filter((h) => h.conversationUuid === id).length, 1);
              } else {
                assert.equal(mine.length, 0);
                assert.equal(tags.filter((t) => t.conversationUuid === id).length, 0);
                assert.equal(handoffs.filter((h) => h.conversationUuid === id).length, 0);
              }
            }
            const keysInUse = new Set(ups.map((u) => u.objectKey));
            const root = join(dataDir, 'objects');
            objectsAwaitingJob += (await filesUnder(root)).filter((k) => !keysInUse.has(k)).length;
            // The queue (a worker after restart) finishes what the killed process left.
            const prober = createMediaInfoProber();
            await runDueJobs(services.queue, jobHandlers(services, prober), QUIET);
            prober.close();
            const orphans = (await filesUnder(root)).filter((k) => !keysInUse.has(k));
            assert.deepEqual(orphans, [], 'objects left without an upload row');
            if (n + 1 < CYCLES) ids = await makeCalls(services, keys, n + 1);
          } finally {
            await closeServices(services);
          }
        }
        figure(`erasure_crash_${backend}_cycles`, CYCLES);
        figure(`erasure_crash_${backend}_calls`, made.size);
        figure(`erasure_crash_${backend}_acknowledged`, acked.size);
        figure(`erasure_crash_${backend}_objects_left_for_the_queue`, objectsAwaitingJob);
        assert.ok(acked.size > 0, 'some erasures were acknowledged');
        assert.ok(acked.size < made.size, 'some erasures were cut off by the kill');
      } finally {
        await pgDb?.drop();
        await rm(dataDir, { recursive: true, force: true });
      }
    });
  });
}
