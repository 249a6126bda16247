/** `cqs calls list|get|download|delete` as a script runs them: a real child process against a listening server. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CqsNodeClient, fileSource } from '../packages/client/src/node.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness } from './helpers/harness.ts';
import { startListening } from './helpers/listening.ts';
import { CLI_MAIN, childEnv, runCli } from './helpers/process.ts';
import { writeStereoWav } from './helpers/wav.ts';

const T0 = 1_763_985_600;
const cqs = runCli;

for (const backend of BACKENDS) {
  describe(`cqs calls list, get, download, delete (${backend})`, () => {
    let h: Harness;
    let c: TestCompany;
    let env: Record<string, string>;
    let dir: string;
    let client: CqsNodeClient;
    let wav: string;
    const ids: Record<string, string> = {};

    before(async () => {
      const started = await startListening(backend);
      h = started.h;
      c = await h.company();
      const { key } = await c.addKey(c.admin.id, ['calls', 'calls:read', 'calls:delete']);
      env = { CQS_URL: started.baseUrl, CQS_API_KEY: key };
      client = new CqsNodeClient({ baseUrl: started.baseUrl, apiKey: key });
      dir = await mkdtemp(join(tmpdir(), 'cqs-cli-calls-'));
      wav = join(dir, 'call.wav');
      await writeStereoWav(wav, 2_000_000);
      for (let i = 0; i < 3; i++) {
        await client.createCall({
          agent_email: c.agent.email,
          product_id: c.productId,
          conversation_id: `cli-${i}`,
          start_time: T0 + i,
          tags: [{ key: 'team', value: i === 1 ? 'red' : 'blue', type: 'string' }],
        });
      }
      await client.uploadRecording({
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: 'cli-rec',
        start_time: T0 + 10,
        filename: 'call.wav',
        body: await fileSource(wav),
      });
      for await (const call of client.listCalls()) ids[call.conversation_id] = call.id;
    });
    after(async () => {
      await h.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('calls list --json prints NDJSON, newest first, across pages, with filters as flags', async () => {
      const all = await cqs(['calls', 'list', '--json', '--page-size', '1'], env);
      assert.equal(all.code, 0, all.err);
      const lines = all.out.trimEnd().split('\n');
      assert.deepEqual(
        lines.map((l) => JSON.parse(l).conversation_id),
        ['cli-rec', 'cli-2', 'cli-1', 'cli-0'],
      );
      const blue = await cqs(
        ['calls', 'list', '--json', '--tag', 'team:blue', '--start-time-lt', String(T0 + 5)],
        env,
      );
      assert.deepEqual(
        blue.out
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l).conversation_id),
        ['cli-2', 'cli-0'],
      );
      const ready = await cqs(['calls', 'list', '--json', '--media', 'ready'], env);
      assert.deepEqual(
        ready.out
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l).id),
        [ids['cli-rec']],
      );
      const one = await cqs(['calls', 'list', '--json', '--limit', '1'], env);
      assert.equal(one.out.trimEnd().split('\n').length, 1);
    });

    it('calls list prints a table without --json', async () => {
      const run = await cqs(['calls', 'list', '--conversation-id', 'cli-1'], env);
      assert.equal(run.code, 0, run.err);
      const [header, row, rest] = run.out.split('\n');
      assert.match(header ?? '', /^ID\s+START \(UTC\)\s+STATE\s+MEDIA\s+AGENT\s+CONVERSATION\s+TAGS$/);
      assert.match(
        row ?? '',
        new RegExp(`^${ids['cli-1']}\\s+2025-11-24T12:00:01Z\\s+created\\s+-\\s+\\S+\\s+cli-1\\s+team=red$`),
      );
      assert.equal(rest, '');
    });

    it('calls list keeps its columns for a conversation_id the service made (a UUID)', async () => {
      await client.createCall({
        agent_email: c.agent.email,
        product_id: c.productId,
        tags: [{ key: 'made_id', value: 'yes', type: 'string' }],
      });
      const run = await cqs(['calls', 'list', '--tag', 'made_id:yes'], env);
      assert.equal(run.code, 0, run.err);
      const [header, row] = run.out.split('\n');
      assert.match(
        row ?? '',
        /\s[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\s+made_id=yes$/,
      );
      assert.equal(row?.indexOf('made_id=yes'), header?.indexOf('TAGS'), `aligned:\n${run.out}`);
    });

    it('prints control characters of stored values visibly, not to the terminal', async () => {
      // Any key with the calls scope can store a tag that, printed raw, sets the terminal's title, clears
      // the line and forges a row.
      const value = '\u001b]0;pwned\u0007\u001b[2K\rFAKE ROW\nfake-id';
      await client.createCall({
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: 'cli-escape',
        tags: [{ key: 'note', value, type: 'string' }],
      });
      const run = await cqs(['calls', 'list', '--conversation-id', 'cli-escape'], env);
      assert.equal(run.code, 0, run.err);
      // No control character but the lines' ends.
      assert.doesNotMatch(run.out.replaceAll('\n', ''), /\p{Cc}/u);
      const lines = run.out.trimEnd().split('\n');
      assert.equal(lines.length, 2, run.out);
      assert.ok(
        lines[1]?.endsWith('note=\\u001b]0;pwned\\u0007\\u001b[2K\\u000dFAKE ROW\\u000afake-id'),
        lines[1],
      );
    });

    it('stops quietly (exit 0) when the reader of its output goes away', async () => {
      // As `cqs calls list --json | head -0`: the pipe is closed before the first line is written.
      const child = spawn(process.execPath, [CLI_MAIN, 'calls', 'list', '--json'], { env: childEnv(env) });
      child.stdout.destroy();
      let err = '';
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
      });
      const code = await new Promise((resolve) => child.on('close', resolve));
      assert.equal(code, 0, err);
      assert.equal(err, '');
    });

    it('calls upload of a directory or an unreadable file is exit 2, and makes no call', async () => {
      const count = async () => {
        let n = 0;
        for await (const _ of client.listCalls()) n++;
        return n;
      };
      const before = await count();
      const unreadable = join(dir, 'unreadable.wav');
      await writeFile(unreadable, 'x');
      await chmod(unreadable, 0);
      // root reads any file whatever its mode: then only the directory is tried.
      const targets = process.getuid?.() === 0 ? [dir] : [dir, unreadable];
      for (const target of targets) {
        const run = await cqs(
          ['calls', 'upload', target, '--agent', c.agent.email, '--product', String(c.productId)],
          env,
        );
        assert.equal(run.code, 2, `${target}: ${run.err}`);
        assert.match(run.err, /cannot read/);
      }
      assert.equal(await count(), before, 'a call was made for a file that cannot be sent');
    });

    it('refuses a malformed filter before asking (exit 2), and an API refusal is exit 5', async () => {
      assert.equal((await cqs(['calls', 'list', '--state', 'gone'], env)).code, 2);
      assert.equal((await cqs(['calls', 'list', '--product-id', 'x'], env)).code, 2);
      const noScope = await cqs(['calls', 'list', '--json'], { ...env, CQS_API_KEY: c.key });
      assert.equal(noScope.code, 5, noScope.err);
      assert.equal(JSON.parse(noScope.out).status, 403);
    });

    it('calls get prints the call', async () => {
      const run = await cqs(['calls', 'get', ids['cli-rec'] ?? '', '--json'], env);
      assert.equal(run.code, 0, run.err);
      const call = JSON.parse(run.out);
      assert.equal(call.id, ids['cli-rec']);
      assert.equal(call.uploads[0].status, 'ready');
      assert.equal((await cqs(['calls', 'get', '00000000-0000-4000-8000-000000000000'], env)).code, 5);
    });

    it('calls download writes the recording with progress on stderr, to -o or to ID.ext', async () => {
      const out = join(dir, 'out.wav');
      const run = await cqs(['calls', 'download', ids['cli-rec'] ?? '', '-o', out], env);
      assert.equal(run.code, 0, run.err);
      assert.match(run.err, /downloaded 2\.0 of 2\.0 MB \(100%\)/);
      assert.match(run.out, /^saved 2000000 bytes \(audio\/wav\) to /);
      assert.deepEqual(await readFile(out), await readFile(wav));
      const here = await cqs(['calls', 'download', ids['cli-rec'] ?? '', '--json'], env, dir);
      assert.equal(here.code, 0, here.err);
      assert.equal(JSON.parse(here.out).path, `${ids['cli-rec']}.wav`);
      assert.deepEqual(await readFile(join(dir, `${ids['cli-rec']}.wav`)), await readFile(wav));
      const none = await cqs(['calls', 'download', ids['cli-0'] ?? '', '-o', join(dir, 'none.wav')], env);
      assert.equal(none.code, 5, none.err);
    });

    it('calls delete erases the call; a second delete, or a key whose user is not an admin, is exit 5', async () => {
      await client.createCall({
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: 'cli-erase',
        start_time: T0 - 100,
      });
      let id = '';
      for await (const call of client.listCalls({ conversation_id: 'cli-erase' })) id = call.id;
      assert.ok(id);
      const agentKey = (await c.addKey(c.agent.id, ['calls:read', 'calls:delete'])).key;
      const refused = await cqs(['calls', 'delete', id, '--json'], { ...env, CQS_API_KEY: agentKey });
      assert.equal(refused.code, 5, refused.err);
      assert.equal(JSON.parse(refused.out).status, 403);

      const run = await cqs(['calls', 'delete', id], env);
      assert.equal(run.code, 0, run.err);
      assert.equal(run.out, `deleted ${id}\n`);
      assert.equal((await cqs(['calls', 'get', id], env)).code, 5);
      const again = await cqs(['calls', 'delete', id, '--json'], env);
      assert.equal(again.code, 5, again.err);
      assert.equal(JSON.parse(again.out).status, 404);
      const list = await cqs(['calls', 'list', '--json', '--conversation-id', 'cli-erase'], env);
      assert.equal(list.code, 0, list.err);
      assert.equal(list.out, '');
    });
  });
}
