/** The integrator commands of `cqs` as a script runs them: a real child process against a listening server. */
import assert from 'node:assert/strict';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { footprint } from './helpers/calls.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { createRecord, finalizeRecord } from './helpers/handoffs.ts';
import { BACKENDS, type Harness } from './helpers/harness.ts';
import { startListening } from './helpers/listening.ts';
import { startCli as cqs } from './helpers/process.ts';
import { writeStereoWav } from './helpers/wav.ts';

for (const backend of BACKENDS) {
  describe(`cqs integrator commands (${backend})`, () => {
    let h: Harness;
    let c: TestCompany;
    let env: Record<string, string>;
    let dir: string;
    before(async () => {
      const started = await startListening(backend);
      h = started.h;
      c = await h.company();
      env = { CQS_URL: started.baseUrl, CQS_API_KEY: c.key };
      dir = await mkdtemp(join(tmpdir(), 'cqs-cli-int-'));
    });
    after(async () => {
      await h.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('calls upload of a 20 MB stereo WAV exits 0 with status ready and shows progress', async () => {
      const path = join(dir, 'big call.wav');
      const size = await writeStereoWav(path, 20_000_000);
      const args = ['calls', 'upload', path, '--agent', c.agent.email, '--product', String(c.productId)];
      const tags = ['--tag', 'sale=true:boolean', '--tag', 'queue=billing', '--tag', 'score=7:integer'];
      const run = await cqs([...args, ...tags, '--channels', 'agent,customer', '--json'], env).done;
      assert.equal(run.code, 0, run.err);
      const status = JSON.parse(run.out) as { status: string; size: number; filename: string };
      assert.equal(status.status, 'ready');
      assert.equal(status.size, size);
      assert.equal(status.filename, 'big call.wav');
      assert.match(run.err, /uploaded 20\.0 of 20\.0 MB \(100%\)/);
    });

    it('calls upload of a file that is not audio exits 6 (rejected)', async () => {
      const path = join(dir, 'noise.wav');
      await writeFile(path, 'not audio '.repeat(500));
      const args = ['calls', 'upload', path, '--agent', c.agent.email, '--product', String(c.productId)];
      const run = await cqs([...args, '--json'], env).done;
      assert.equal(run.code, 6, run.err);
      assert.equal(JSON.parse(run.out).status, 'rejected');
    });

    it('calls upload of an empty or a too large file exits 2 and creates no call', async () => {
      const empty = join(dir, 'empty.wav');
      await writeFile(empty, '');
      const huge = join(dir, 'huge.wav');
      await writeFile(huge, '');
      await truncate(huge, 250_000_000);
      const before = await footprint(h, c);
      for (const [path, says] of [
        [empty, /empty \(0 bytes\)/],
        [huge, /250000000 bytes; the service takes recordings under 250000000 bytes/],
      ] as const) {
        const args = ['calls', 'upload', path, '--agent', c.agent.email, '--product', String(c.productId)];
        const run = await cqs([...args, '--json'], env).done;
        assert.equal(run.code, 2, run.err);
        assert.match(JSON.parse(run.out).error, says);
        assert.match(run.err, says);
      }
      assert.deepEqual(await footprint(h, c), before);
    });

    it('calls tag, products, and exit codes 2 and 5', async () => {
      const create = await h.request({
        method: 'POST',
        url: '/api/v1/call/create',
        key: c.key,
        body: { agent_email: c.agent.email, product_id: c.productId, conversation_id: 'cli-tag' },
      });
      assert.equal(create.statusCode, 200, create.body);
      const tag = [
        'calls',
        'tag',
        '--conversation-id',
        'cli-tag',
        '--agent',
        c.agent.email,
        '--tag',
        'vip=true:boolean',
      ];
      const tagged = await cqs([...tag, '--json'], env).done;
      assert.equal(tagged.code, 0, tagged.err);
      assert.deepEqual(JSON.parse(tagged.out), { success: true });
      const products = await cqs(['products', '--json'], env).done;
      assert.equal(products.code, 0, products.err);
      assert.ok(JSON.parse(products.out).products.some((p: { id: number }) => p.id === c.productId));
      assert.equal((await cqs(['calls', 'tag', '--agent', 'x@example.test'], env).done).code, 2);
      assert.equal((await cqs(['products'], { ...env, CQS_URL: '' }).done).code, 2);
      const missing = await cqs(['handoff', 'get', '00000000-0000-4000-8000-000000000000', '--json'], env)
        .done;
      assert.equal(missing.code, 5);
      assert.equal(JSON.parse(missing.out).status, 404);
    });

    it('handoff wait returns as soon as the record is finalized, and exits 7 on timeout', async () => {
      const { id } = await createRecord(h, c, { metadata: { queue: 'billing' } });
      const timedOut = await cqs(['handoff', 'wait', id, '--timeout', '1'], env).done;
      assert.equal(timedOut.code, 7, timedOut.err);
      const waiting = cqs(['handoff', 'wait', id, '--json'], env);
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(waiting.exited(), false, 'still waiting while the record is partial');
      assert.equal((await finalizeRecord(h, c, id, { outcome: 'sale' })).statusCode, 200);
      const finalizedAt = Date.now();
      const run = await waiting.done;
      assert.equal(run.code, 0, run.err);
      assert.ok(Date.now() - finalizedAt < 2000);
      const record = JSON.parse(run.out);
      assert.equal(record.final, true);
      assert.deepEqual(record.metadata, { queue: 'billing', outcome: 'sale' });
      const got = await cqs(['handoff', 'get', id, '--json'], env).done;
      assert.equal(JSON.parse(got.out).final, true);
    });
  });
}
