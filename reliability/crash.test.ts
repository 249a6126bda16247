/**
 * Crash safety, the Jepsen set test: the service as a child process is SIGKILLed at random moments under
 * concurrent creates, add_tags and handoff merges; every write answered 2xx must be fully there afterwards.
 */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { and, eq } from 'drizzle-orm';
import { callHandoffs, conversations, conversationTags } from '../src/adapters/db/schema.ts';
import { loadConfig } from '../src/config/config.ts';
import { hashApiKey } from '../src/domain/access/api-keys.ts';
import { closeServices, openServices } from '../src/server.ts';
import { createPostgresDatabase } from '../test/helpers/harness.ts';
import { call, figure, rand, type SeededKeys, SHORT, seedCompany, serve, tempDir } from './lib.ts';

const CYCLES = SHORT ? 4 : 20;
const WORKERS = 8;

/** What the service acknowledged. */
interface Acked {
  creates: Map<string, number>; // conversation_id → transcript length (3 tags t0..t2 each)
  tags: Map<string, string[]>; // conversation_id → keys added by add_tags
  merges: Map<string, string[]>; // handoff id → metadata keys merged
}

async function cycle(
  port: number,
  k: SeededKeys,
  productId: number,
  acked: Acked,
  n: number,
  stop: () => boolean,
) {
  let i = 0;
  const worker = async (w: number) => {
    let handoff: string | undefined;
    while (!stop() && i < 100_000) {
      const id = `c${n}-${w}-${i++}`;
      const op = rand(0, 4);
      if (op === 0 || acked.creates.size === 0) {
        const len = rand(1, 6);
        const r = await call(port, 'POST', '/api/v1/call/create', k.calls, {
          agent_email: k.agentEmail,
          product_id: productId,
          conversation_id: id,
          transcript: Array.from({ length: len }, (_, s) => ({
            role: 'agent',
            text: `s${s}`,
            start: s,
            stop: s + 1,
          })),
          tags: [0, 1, 2].map((t) => ({ key: `t${t}`, type: 'string', value: `${id}-${t}` })),
        });
        if (r.status === 200) acked.creates.set(id, len);
      } else if (op === 1) {
        const ids = [...acked.creates.keys()];
        const target = ids[rand(0, ids.length)] as string;
        const r = await call(port, 'POST', '/api/v1/call/add_tags', k.calls, {
          conversation_id: target,
          agent_email: k.agentEmail,
          tags: [{ key: `a-${id}`, type: 'integer', value: 7 }],
        });
        if (r.status === 200) acked.tags.set(target, [...(acked.tags.get(target) ?? []), `a-${id}`]);
      } else if (op === 2 || handoff === undefined) {
        const r = await call(port, 'POST', '/api/v1/call-handoff', k.writer, {});
        if (r.status === 201) {
          handoff = (r.body as { handoff_id: string }).handoff_id;
          acked.merges.set(handoff, []);
        }
      } else {
        const h = handoff;
        const r = await call(port, 'PATCH', `/api/v1/call-handoff/${h}`, k.writer, {
          metadata: { [id]: id },
        });
        if (r.status === 200) acked.merges.set(h, [...(acked.merges.get(h) ?? []), id]);
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
}

/** Counts the acknowledged writes missing from the database (and half-written ones). */
async function lost(env: Record<string, string>, acked: Acked): Promise<{ lost: number; acked: number }> {
  const services = await openServices(loadConfig(env));
  try {
    const db = services.database.db;
    const convs = await db.select().from(conversations);
    const byId = new Map(convs.map((c) => [c.conversationId, c]));
    const tags = await db.select().from(conversationTags);
    const tagKeys = new Map<string, Map<string, unknown>>();
    for (const t of tags) {
      const m = tagKeys.get(t.conversationUuid) ?? new Map<string, unknown>();
      m.set(t.key, t.value);
      tagKeys.set(t.conversationUuid, m);
    }
    let missing = 0;
    let total = 0;
    for (const [id, len] of acked.creates) {
      total++;
      const c = byId.get(id);
      const t = c ? tagKeys.get(c.id) : undefined;
      const ok =
        c !== undefined &&
        Array.isArray(c.transcript) &&
        c.transcript.length === len &&
        [0, 1, 2].every((i) => t?.get(`t${i}`) === `${id}-${i}`);
      if (!ok) missing++;
    }
    // Nothing half-written: every stored conversation, acknowledged or not, has its three tags.
    for (const c of convs) {
      const t = tagKeys.get(c.id);
      if (![0, 1, 2].every((i) => t?.get(`t${i}`) === `${c.conversationId}-${i}`)) missing++;
    }
    for (const [id, keys] of acked.tags) {
      const c = byId.get(id);
      for (const k of keys) {
        total++;
        if (!c || tagKeys.get(c.id)?.get(k) !== 7) missing++;
      }
    }
    for (const [id, keys] of acked.merges) {
      total++;
      const [h] = await db
        .select()
        .from(callHandoffs)
        .where(and(eq(callHandoffs.id, id)));
      if (!h) {
        missing++;
        continue;
      }
      const meta = h.metadata as Record<string, unknown>;
      for (const k of keys) {
        total++;
        if (meta[k] !== k) missing++;
      }
    }
    return { lost: missing, acked: total };
  } finally {
    await closeServices(services);
  }
}

for (const backend of ['pglite', 'postgres'] as const) {
  describe(`crash safety under SIGKILL (${backend})`, {
    skip: backend === 'postgres' && !process.env.TEST_DATABASE_URL,
  }, () => {
    it(`loses no acknowledged write over ${CYCLES} kill cycles`, async () => {
      const dataDir = await tempDir('cqs-crash-');
      const pgDb = backend === 'postgres' ? await createPostgresDatabase() : undefined;
      const env: Record<string, string> = {
        DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
        ...(pgDb ? { DATABASE_URL: pgDb.url } : {}),
      };
      try {
        const keys = await seedCompany(env, dataDir, 'crash');
        const acked: Acked = { creates: new Map(), tags: new Map(), merges: new Map() };
        let productId = 0;
        let keysInLogs = 0;
        for (let n = 0; n < CYCLES; n++) {
          const s = await serve(env);
          if (productId === 0) {
            const r = await call(s.port, 'GET', '/api/v1/product/list', keys.calls);
            productId = (r.body as { products: { id: number }[] }).products[0]?.id ?? 0;
          }
          let stopped = false;
          const load = cycle(s.port, keys, productId, acked, n, () => stopped);
          await new Promise((r) => setTimeout(r, rand(100, 1500)));
          await s.kill();
          stopped = true;
          await load;
          const out = s.output();
          for (const k of [keys.calls, keys.writer]) {
            if (out.includes(k) || out.includes(hashApiKey(k))) keysInLogs++;
          }
        }
        const result = await lost(env, acked);
        figure(`crash_${backend}_cycles`, CYCLES);
        figure(`crash_${backend}_acknowledged_writes`, result.acked);
        figure(`crash_${backend}_acknowledged_writes_lost`, result.lost);
        figure(`crash_${backend}_keys_or_hashes_in_logs`, keysInLogs);
        assert.equal(keysInLogs, 0);
        assert.ok(result.acked > 0, 'some writes were acknowledged');
        assert.equal(result.lost, 0);
      } finally {
        await pgDb?.drop();
        await rm(dataDir, { recursive: true, force: true });
      }
    });
  });
}
