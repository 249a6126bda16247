/** Every example in examples/ runs as documented against a listening server, so none can rot. */

import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { TestCompany } from './helpers/fixtures.ts';
import { createRecord, finalizeRecord } from './helpers/handoffs.ts';
import { BACKENDS, type Harness } from './helpers/harness.ts';
import { startListening } from './helpers/listening.ts';
import { writeStereoWav } from './helpers/wav.ts';

const run = promisify(execFile);
const example = (name: string) => new URL(`../examples/${name}`, import.meta.url).pathname;

for (const backend of BACKENDS) {
  describe(`examples (${backend})`, () => {
    let h: Harness;
    let c: TestCompany;
    let env: Record<string, string>;
    let dir: string;
    const node = (name: string, args: string[] = []) =>
      run(process.execPath, [example(name), ...args], { env: { ...process.env, ...env } });
    before(async () => {
      const started = await startListening(backend);
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
      for (const name of ['tag-call.ts', 'upload-recording.ts', 'wait-for-handoff.ts', 'handoff-poller.ts']) {
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
  });
}
