/** Every example in examples/ runs as documented against a listening server, so none can rot. */

import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { post } from './helpers/calls.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { createRecord, finalizeRecord } from './helpers/handoffs.ts';
import { BACKENDS, type Harness } from './helpers/harness.ts';
import { startListening } from './helpers/listening.ts';
import { writeStereoWav } from './helpers/wav.ts';

const run = promisify(execFile);
const example = (name: string) => new URL(`../examples/${name}`, import.meta.url).pathname;

/** An example left running: its output so far, a wait for a condition on it, and a stop (SIGINT). */
function start(name: string, args: string[], env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, [example(name), ...args], {
    env: { ...process.env, ...env },
  });
  const out = { stdout: '', stderr: '' };
  child.stdout?.on('data', (d: Buffer) => {
    out.stdout += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out.stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    out,
    lines: () => out.stdout.split('\n').filter(Boolean),
    async until(predicate: () => boolean, what: string) {
      const deadline = Date.now() + 30_000;
      while (!predicate()) {
        if (Date.now() > deadline || child.exitCode !== null) {
          throw new Error(`${name}: ${what} did not happen; stdout: ${out.stdout}; stderr: ${out.stderr}`);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    stop() {
      if (child.exitCode === null) child.kill('SIGINT');
      return exited;
    },
  };
}

for (const backend of BACKENDS) {
  describe(`examples (${backend})`, () => {
    let h: Harness;
    let c: TestCompany;
    let env: Record<string, string>;
    let dir: string;
    const node = (name: string, args: string[] = []) =>
      run(process.execPath, [example(name), ...args], { env: { ...process.env, ...env } });
    before(async () => {
      const started = await startListening(backend, {
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_POLL_INTERVAL: '100',
      });
      h = started.h;
      c = await h.company();
      env = {
        CQS_URL: started.baseUrl,
        CQS_API_KEY: c.key,
        CQS_AGENT: c.agent.email,
        CQS_PRODUCT: String(c.productId),
      };
      dir = await mkdtemp(join(tmpdir(), 'cqs-examples-'));
    });
    after(async () => {
      await h.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('create-call.ts and tag-call.ts', async () => {
      const created = await node('create-call.ts', ['ex-1']);
      assert.deepEqual(JSON.parse(created.stdout), { success: true, conversation_id: 'ex-1' });
      const tagged = await node('tag-call.ts', ['ex-1']);
      assert.deepEqual(JSON.parse(tagged.stdout), { success: true });
    });

    it('upload-recording.ts', async () => {
      const path = join(dir, 'example.wav');
      await writeStereoWav(path, 500_000);
      const { stdout, stderr } = await node('upload-recording.ts', [path]);
      assert.equal(JSON.parse(stdout).status, 'ready');
      assert.match(stderr, /100%/);
    });

    it('handoff-poller.ts prints the final record when run', async () => {
      const { id } = await createRecord(h, c, { metadata: { queue: 'sales' } });
      await finalizeRecord(h, c, id, { outcome: 'none' });
      const { stdout } = await node('handoff-poller.ts', [id]);
      const record = JSON.parse(stdout);
      assert.equal(record.final, true);
      assert.deepEqual(record.metadata, { queue: 'sales', outcome: 'none' });
    });

    it('prints a usage line, not a stack trace, when an argument is missing', () => {
      for (const name of [
        'tag-call.ts',
        'upload-recording.ts',
        'wait-for-handoff.ts',
        'handoff-poller.ts',
        'webhook-receiver.ts',
        'incremental-sync.ts',
      ]) {
        const result = spawnSync(process.execPath, [example(name)], { encoding: 'utf8' });
        assert.equal(result.status, 2, `${name}: ${result.stderr}`);
        assert.match(result.stderr, new RegExp(`^usage: .*node examples/${name} `), name);
        assert.doesNotMatch(result.stderr, /\n\s+at /, name);
      }
    });

    it('wait-for-handoff.ts', async () => {
      const { id } = await createRecord(h, c, { metadata: { queue: 'billing' } });
      const waiting = node('wait-for-handoff.ts', [id]);
      await new Promise((r) => setTimeout(r, 1000));
      await finalizeRecord(h, c, id, { outcome: 'sale' });
      const { stdout } = await waiting;
      assert.deepEqual(JSON.parse(stdout), { queue: 'billing', outcome: 'sale' });
    });

    it('webhook-receiver.ts verifies signatures and prints each event once; refuses a forged delivery', async () => {
      const own = await h.company();
      const key = (await own.addKey(own.admin.id, ['webhooks'])).key;
      const port = /listening on (\S+)/;
      let receiver: ReturnType<typeof start> | undefined;
      try {
        // The secret comes with the endpoint, the URL with the listening receiver: start it, then register.
        const endpoint = await h.request({
          method: 'POST',
          url: '/api/v1/webhooks',
          key,
          body: { url: 'http://127.0.0.1:9/', types: ['call.created'] },
        });
        assert.equal(endpoint.statusCode, 201, endpoint.body);
        receiver = start('webhook-receiver.ts', ['0'], { CQS_WEBHOOK_SECRET: endpoint.json().secret });
        const r = receiver;
        await r.until(() => port.test(r.out.stderr), 'listening');
        const url = port.exec(r.out.stderr)?.[1] as string;
        const patched = await h.request({
          method: 'PATCH',
          url: `/api/v1/webhooks/${endpoint.json().id}`,
          key,
          body: { url },
        });
        assert.equal(patched.statusCode, 200, patched.body);
        const created = await post(h, own, '/api/v1/call/create', {
          agent_email: own.agent.email,
          product_id: own.productId,
          conversation_id: 'hook-1',
        });
        assert.equal(created.statusCode, 200, created.body);
        await r.until(() => r.lines().length >= 1, 'a printed event');
        const event = JSON.parse(r.lines()[0] as string);
        assert.equal(event.type, 'call.created');
        assert.equal(event.data.conversation_id, 'hook-1');
        const forged = await fetch(url, {
          method: 'POST',
          headers: {
            'webhook-id': 'evt_forged',
            'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
            'webhook-signature': 'v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
          },
          body: '{"id":"evt_forged","type":"call.deleted","created_at":"","data":{}}',
        });
        assert.equal(forged.status, 400);
        await r.until(() => /refused a delivery: no matching signature/.test(r.out.stderr), 'the refusal');
        assert.equal(r.lines().length, 1, 'the forged event was not printed');
      } finally {
        await receiver?.stop();
      }
    });

    it('incremental-sync.ts prints the feed, saves its cursor and resumes from it', async () => {
      const own = await h.company();
      const key = (await own.addKey(own.admin.id, ['events:read'])).key;
      const syncEnv = { CQS_URL: env.CQS_URL as string, CQS_API_KEY: key };
      const cursorFile = join(dir, 'cursor');
      const create = async (id: string) => {
        const res = await post(h, own, '/api/v1/call/create', {
          agent_email: own.agent.email,
          product_id: own.productId,
          conversation_id: id,
        });
        assert.equal(res.statusCode, 200, res.body);
      };
      const ids = (lines: string[]) => lines.map((l) => JSON.parse(l).data.conversation_id);
      await create('sync-1');
      await create('sync-2');
      const first = start('incremental-sync.ts', [cursorFile], syncEnv);
      await first.until(() => first.lines().length >= 2, 'two events');
      assert.equal(await first.stop(), 0, first.out.stderr);
      assert.deepEqual(ids(first.lines()), ['sync-1', 'sync-2']);
      assert.match(first.out.stderr, /starting from the oldest kept event/);
      const saved = (await readFile(cursorFile, 'utf8')).trim();
      await create('sync-3');
      const second = start('incremental-sync.ts', [cursorFile], syncEnv);
      await second.until(() => second.lines().length >= 1, 'the new event');
      assert.equal(await second.stop(), 0, second.out.stderr);
      assert.deepEqual(ids(second.lines()), ['sync-3'], 'resumed after the saved cursor, nothing repeated');
      assert.match(second.out.stderr, new RegExp(`resuming from ${saved}`));
    });
  });
}
