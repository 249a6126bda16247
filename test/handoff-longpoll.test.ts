import assert from 'node:assert/strict';
import { type AddressInfo, connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  createRecord,
  finalizeRecord,
  type HandoffBody,
  patchRecord,
  readRecord,
  sleep,
} from './helpers/handoffs.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { startSecondProcess } from './helpers/second-process.ts';

const FINAL_CACHE = 'private, max-age=31536000, immutable';

/** Runs `read` and tells how long it took. */
async function timed<T>(read: Promise<T>): Promise<{ res: T; ms: number }> {
  const started = performance.now();
  const res = await read;
  return { res, ms: performance.now() - started };
}

for (const backend of BACKENDS) {
  describe(`long poll of call-handoff records (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    it('wakes a waiting reader on a PATCH, well before the deadline', async (t) => {
      const c = await h.company();
      const { id, etag } = await createRecord(h, c, { metadata: { a: 1 } });
      const waiting = timed(readRecord(h, c, id, { wait: 10, etag }));
      await sleep(200);
      const patched = await patchRecord(h, c, id, { b: 2 });
      const { res, ms } = await waiting;
      t.diagnostic(`woke after ${Math.round(ms)} ms (the PATCH was sent at 200 ms)`);
      assert.equal(res.statusCode, 200);
      assert.ok(ms < 3000, `${ms} ms`);
      assert.deepEqual(res.json(), patched.json());
      assert.equal(res.headers.etag, patched.headers.etag);
      assert.equal(res.headers['cache-control'], 'no-store');
    });

    it('wakes a waiting reader without If-None-Match on the next change', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c);
      const waiting = timed(readRecord(h, c, id, { wait: 10 }));
      await sleep(200);
      await patchRecord(h, c, id, { b: 2 });
      const { res, ms } = await waiting;
      assert.equal(res.statusCode, 200);
      assert.ok(ms < 3000 && ms >= 150, `${ms} ms`);
      assert.deepEqual(res.json().metadata, { b: 2 });
    });

    it('wakes a waiting reader on finalize, with the final record and its immutable caching', async () => {
      const c = await h.company();
      const { id, etag } = await createRecord(h, c);
      const waiting = timed(readRecord(h, c, id, { wait: 10, etag }));
      await sleep(100);
      const fin = await finalizeRecord(h, c, id, { done: true });
      const { res, ms } = await waiting;
      assert.ok(ms < 3000, `${ms} ms`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), fin.json());
      assert.equal(res.headers['cache-control'], FINAL_CACHE);
    });

    it('answers 304 at the deadline when nothing changed, and 200 with the record without If-None-Match', async () => {
      const c = await h.company();
      const { id, etag, body } = await createRecord(h, c);
      const [withTag, withoutTag] = await Promise.all([
        timed(readRecord(h, c, id, { wait: 1, etag })),
        timed(readRecord(h, c, id, { wait: 1 })),
      ]);
      assert.equal(withTag.res.statusCode, 304);
      assert.equal(withTag.res.body, '');
      assert.equal(withTag.res.headers.etag, etag);
      assert.ok(withTag.ms >= 900 && withTag.ms < 5000, `${withTag.ms} ms`);
      assert.equal(withoutTag.res.statusCode, 200);
      assert.deepEqual(withoutTag.res.json(), body);
      assert.ok(withoutTag.ms >= 900 && withoutTag.ms < 5000, `${withoutTag.ms} ms`);
    });

    it('waits when If-None-Match lists the current version among others', async () => {
      const c = await h.company();
      const { id, etag } = await createRecord(h, c);
      // A newer version named beside the current one made the wait answer 304 at once: a poller spun.
      const { res, ms } = await timed(readRecord(h, c, id, { wait: 2, etag: `${etag}, "${id}-v9"` }));
      assert.equal(res.statusCode, 304);
      assert.ok(ms >= 1500, `answered after ${Math.round(ms)} ms`);
    });

    it('answers at once when the client’s ETag is out of date, or the record is final', async () => {
      const c = await h.company();
      const { id, etag } = await createRecord(h, c);
      await patchRecord(h, c, id, { a: 1 });
      const stale = await timed(readRecord(h, c, id, { wait: 10, etag }));
      assert.equal(stale.res.statusCode, 200);
      assert.ok(stale.ms < 2000, `${stale.ms} ms`);
      assert.deepEqual(stale.res.json().metadata, { a: 1 });
      await finalizeRecord(h, c, id);
      const final = await timed(readRecord(h, c, id, { wait: 30 }));
      assert.equal(final.res.statusCode, 200);
      assert.ok(final.ms < 2000, `${final.ms} ms`);
      const current = await timed(readRecord(h, c, id, { wait: 30, etag: String(final.res.headers.etag) }));
      assert.equal(current.res.statusCode, 304);
      assert.ok(current.ms < 2000, `${current.ms} ms`);
    });

    it('wakes 25 readers of one record with one change; readers of other records sleep on', async () => {
      const c = await h.company();
      const other = await h.company();
      const { id, etag } = await createRecord(h, c);
      const elsewhere = await createRecord(h, other);
      const sameCompany = await createRecord(h, c);
      const readers = Array.from({ length: 25 }, () => timed(readRecord(h, c, id, { wait: 10, etag })));
      const bystanders = [
        timed(readRecord(h, other, elsewhere.id, { wait: 1, etag: elsewhere.etag })),
        timed(readRecord(h, c, sameCompany.id, { wait: 1, etag: sameCompany.etag })),
      ];
      await sleep(200);
      const patched = await patchRecord(h, c, id, { x: 1 });
      for (const { res, ms } of await Promise.all(readers)) {
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers.etag, patched.headers.etag);
        assert.ok(ms < 3000, `${ms} ms`);
      }
      for (const { res, ms } of await Promise.all(bystanders)) {
        assert.equal(res.statusCode, 304);
        assert.ok(ms >= 900, `a change elsewhere must not answer this wait (${ms} ms)`);
      }
    });

    it('answers 404 for another company’s record even with wait, without waiting', async () => {
      const a = await h.company();
      const b = await h.company();
      const { id, etag } = await createRecord(h, a);
      const { res, ms } = await timed(readRecord(h, b, id, { wait: 10, etag }));
      assert.equal(res.statusCode, 404);
      assert.ok(ms < 2000, `${ms} ms`);
    });

    it('drives a record through its life while readers poll with and without wait (spec 3.1)', async (t) => {
      const c = await h.company();
      const { id, body: created } = await createRecord(h, c, { metadata: { step: 0 } });
      let tick = 0;
      interface Seen {
        reader: string;
        start: number;
        end: number;
        status: number;
        etag: string;
        body: HandoffBody;
      }
      const seen: Seen[] = [];
      let finalizedTick = Number.POSITIVE_INFINITY;
      const began = performance.now();
      let firstFinalEnd = Number.POSITIVE_INFINITY;

      async function reader(name: string, options: { wait?: number; useEtag: boolean; pauseMs: number }) {
        let etag: string | undefined;
        let last: HandoffBody | undefined;
        let afterFinal = 0;
        let requests = 0;
        while (afterFinal < 3) {
          const start = ++tick;
          const res = await readRecord(h, c, id, {
            ...(options.wait !== undefined ? { wait: options.wait } : {}),
            ...(options.useEtag && etag ? { etag } : {}),
          });
          const end = ++tick;
          requests++;
          if (res.statusCode === 304) {
            assert.ok(last && etag, `${name}: 304 without an earlier answer`);
            assert.equal(res.headers.etag, etag, `${name}: 304 for another version`);
          } else {
            assert.equal(res.statusCode, 200, `${name}: ${res.body}`);
            last = res.json() as HandoffBody;
            etag = String(res.headers.etag);
          }
          const body = last as HandoffBody;
          seen.push({ reader: name, start, end, status: res.statusCode, etag: etag as string, body });
          if (body.final) {
            firstFinalEnd = Math.min(firstFinalEnd, end);
            afterFinal++;
          }
          assert.ok(performance.now() - began < 60_000, `${name}: never saw the record final`);
          if (options.pauseMs > 0) await sleep(options.pauseMs);
        }
        return requests;
      }

      async function writer() {
        const expected: Record<string, unknown> = { step: 0 };
        await sleep(100);
        for (let i = 1; i <= 10; i++) {
          const patch: Record<string, unknown> = { step: i, [`k${i}`]: `v${i}` };
          if (i === 6) patch.k2 = null;
          const res = await patchRecord(h, c, id, patch);
          assert.equal(res.statusCode, 200);
          for (const [k, v] of Object.entries(patch)) {
            if (v === null) delete expected[k];
            else expected[k] = v;
          }
          assert.deepEqual(res.json().metadata, expected);
          await sleep(40);
        }
        const fin = await finalizeRecord(h, c, id, { summary: 'done', step: null });
        finalizedTick = ++tick;
        assert.equal(fin.statusCode, 200);
        expected.summary = 'done';
        delete expected.step;
        const final = fin.json() as HandoffBody;
        assert.deepEqual(final.metadata, expected);
        // Attempted writes after final: refused, or (finalize without metadata) a no-op.
        assert.equal((await patchRecord(h, c, id, { late: true })).statusCode, 409);
        assert.equal((await finalizeRecord(h, c, id, { late: true })).statusCode, 409);
        const again = await finalizeRecord(h, c, id);
        assert.equal(again.statusCode, 200);
        assert.deepEqual(again.json(), final);
        return fin;
      }

      const [fin, plain, conditional, longEtag, longBare, longShort] = await Promise.all([
        writer(),
        reader('plain poll', { useEtag: false, pauseMs: 15 }),
        reader('conditional poll', { useEtag: true, pauseMs: 15 }),
        reader('long poll + If-None-Match', { wait: 10, useEtag: true, pauseMs: 0 }),
        reader('long poll', { wait: 10, useEtag: false, pauseMs: 0 }),
        reader('short long poll', { wait: 0.05, useEtag: true, pauseMs: 0 }),
      ]);
      const final = fin.json() as HandoffBody;
      t.diagnostic(
        `requests: plain ${plain}, conditional ${conditional}, long+etag ${longEtag}, long ${longBare}, ` +
          `short long ${longShort}; ${seen.length} observations`,
      );

      const byEtag = new Map<string, HandoffBody>();
      for (const s of seen) {
        // Spec 2.6 and 3.1: six fields; partial means final false and finalized_at null.
        assert.deepEqual(Object.keys(s.body).sort(), Object.keys(created).sort());
        if (!s.body.final) assert.equal(s.body.finalized_at, null, s.reader);
        else assert.equal(typeof s.body.finalized_at, 'string', s.reader);
        // One ETag, one representation.
        const known = byEtag.get(s.etag);
        if (known) assert.deepEqual(s.body, known, `${s.reader}: two bodies for ${s.etag}`);
        else byEtag.set(s.etag, s.body);
        // Once any reader has seen final, every read that starts later is that same final record.
        if (s.start > firstFinalEnd) {
          assert.equal(s.body.final, true, `${s.reader} read a partial record after final was seen`);
          assert.deepEqual(s.body, final, s.reader);
          assert.equal(s.etag, fin.headers.etag);
        }
        if (s.body.final) assert.deepEqual(s.body, final, s.reader);
        // A read that starts after the finalize was answered sees it.
        if (s.start > finalizedTick) assert.equal(s.body.final, true, `${s.reader} missed the finalize`);
      }
      // Each reader's versions only move forward.
      const version = (etag: string) => Number(/-v(\d+)"$/.exec(etag)?.[1]);
      for (const name of new Set(seen.map((s) => s.reader))) {
        const mine = seen.filter((s) => s.reader === name).map((s) => version(s.etag));
        for (let i = 1; i < mine.length; i++) assert.ok((mine[i] as number) >= (mine[i - 1] as number), name);
      }
      // Long polls with If-None-Match waited instead of spinning: at most one answer per version, plus the
      // three final reads.
      assert.ok(longEtag <= 12 + 3, `long poll made ${longEtag} requests`);
      assert.ok(seen.some((s) => s.reader === 'conditional poll' && s.status === 304));
    });
  });

  describe(`long polls whose client left before their handler ran (${backend})`, () => {
    let h: Harness;
    let port: number;
    before(async () => {
      // With Redis, every request awaits it before its handler, a key in memory too.
      h = await startHarness(backend, { METRICS_PORT: '0', REDIS_URL: 'redis://127.0.0.1:6379' });
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      port = (h.app.server.address() as AddressInfo).port;
    });
    after(() => h.close());

    const waiting = async () => {
      const text = await h.services.metrics?.registry.metrics();
      const line = text?.split('\n').find((l) => l.startsWith('cqs_handoff_long_polls_waiting '));
      return Number(line?.split(' ')[1] ?? Number.NaN);
    };

    it('ends their waits with them, not at the deadline', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c);
      assert.equal((await readRecord(h, c, id)).statusCode, 200);
      const sockets = Array.from({ length: 20 }, () => {
        const s = connect(port, '127.0.0.1', () => {
          s.write(`GET /api/v1/call-handoff/${id}?wait=20 HTTP/1.1\r\nHost: x\r\n`);
          s.end(`Authorization: Bearer ${c.key}\r\n\r\n`);
          s.destroy();
        });
        s.on('error', () => {});
        return s;
      });
      await Promise.all(sockets.map((s) => new Promise((resolve) => s.once('close', resolve))));
      // Time for every request to pass authentication and reach its handler.
      await sleep(1000);
      let left = await waiting();
      for (let i = 0; i < 30 && left !== 0; i++) {
        await sleep(100);
        left = await waiting();
      }
      // Waited for until the deadline, they stayed 20 s.
      assert.equal(left, 0, `${left} long polls still waiting 4 s after their clients left`);
    });
  });

  describe(`long polls and shutdown (${backend})`, () => {
    it('answers waiting readers at once when the service stops', async () => {
      const h = await startHarness(backend);
      const c = await h.company();
      const { id, etag } = await createRecord(h, c);
      const waiting = timed(readRecord(h, c, id, { wait: 30, etag }));
      await sleep(300);
      const closing = h.close();
      const { res, ms } = await waiting;
      await closing;
      assert.ok(ms < 5000, `${ms} ms`);
      assert.equal(res.statusCode, 304);
    });
  });
}

describe('long polls across service processes (postgres)', { skip: !BACKENDS.includes('postgres') }, () => {
  let h: Harness;
  let second: Awaited<ReturnType<typeof startSecondProcess>>;
  before(async () => {
    h = await startHarness('postgres');
    second = await startSecondProcess(h.databaseUrl as string);
  });
  after(async () => {
    await second?.stop();
    await h?.close();
  });

  async function readThere(key: string, id: string, wait: number, etag?: string) {
    const res = await fetch(`${second.url}/api/v1/call-handoff/${id}?wait=${wait}`, {
      headers: { authorization: `Bearer ${key}`, ...(etag ? { 'if-none-match': etag } : {}) },
    });
    return {
      status: res.status,
      etag: res.headers.get('etag'),
      cache: res.headers.get('cache-control'),
      text: await res.text(),
    };
  }

  it('wakes a reader waiting in a second process when this process writes', async (t) => {
    const c = await h.company();
    const { id, etag } = await createRecord(h, c, { metadata: { a: 1 } });
    const latencies: number[] = [];
    let current = etag;
    for (let i = 0; i < 5; i++) {
      const waiting = readThere(c.key, id, 10, current);
      await sleep(300);
      const written = performance.now();
      const patched = await patchRecord(h, c, id, { [`k${i}`]: i });
      const res = await waiting;
      const latency = performance.now() - written;
      latencies.push(latency);
      assert.equal(res.status, 200, second.stderr());
      assert.equal(res.etag, patched.headers.etag);
      assert.deepEqual(JSON.parse(res.text), patched.json());
      assert.ok(latency < 3000, `${latency} ms`);
      current = res.etag as string;
    }
    t.diagnostic(
      `cross-process wake-up after the writer's answer: ${latencies.map((l) => Math.round(l)).join(', ')} ms`,
    );
    const waiting = readThere(c.key, id, 10, current);
    await sleep(300);
    const fin = await finalizeRecord(h, c, id);
    const res = await waiting;
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.text), fin.json());
    assert.equal(res.cache, FINAL_CACHE);
    const cached = await readThere(c.key, id, 30, res.etag as string);
    assert.equal(cached.status, 304);
  });

  it('keeps other companies’ records apart in the second process too', async () => {
    const a = await h.company();
    const b = await h.company();
    const { id, etag } = await createRecord(h, a);
    assert.equal((await readThere(b.key, id, 0)).status, 404);
    const started = performance.now();
    const waiting = readThere(a.key, id, 1, etag);
    const res = await waiting;
    assert.equal(res.status, 304);
    assert.ok(performance.now() - started >= 900);
  });
});
