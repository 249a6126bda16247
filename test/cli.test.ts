/** The `cqs` command as a user runs it: a real process, real output, real exit codes. */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

const MAIN = new URL('../src/cli/main.ts', import.meta.url).pathname;

function run(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function serve(env: Record<string, string>): {
  child: ChildProcess;
  output: () => string;
  ready: Promise<void>;
} {
  const child = spawn(process.execPath, [MAIN, 'serve'], { env: { ...process.env, ...env } });
  let output = '';
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d;
      if (output.includes('Server listening')) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${output}`)));
  });
  return { child, output: () => output, ready };
}

describe('cqs command line', () => {
  const dirs: string[] = [];
  const tempDir = async () => {
    const d = await mkdtemp(join(tmpdir(), 'cqs-cli-'));
    dirs.push(d);
    return d;
  };
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('lists its commands in --help', async () => {
    const { code, out } = await run(['--help'], {});
    assert.equal(code, 0);
    for (const command of ['serve', 'migrate', 'company', 'user', 'product', 'grant', 'key', 'seed']) {
      assert.match(out, new RegExp(`\\b${command}\\b`), command);
    }
  });

  it('stops with a message naming each bad variable', async () => {
    const { code, err } = await run(['migrate'], {
      PORT: 'eighty',
      LOG_LEVEL: 'loud',
      DATA_DIR: await tempDir(),
    });
    assert.equal(code, 2);
    assert.match(err, /PORT/);
    assert.match(err, /LOG_LEVEL/);
  });

  it('bootstraps a demo company on first start, prints its key once, and locks the data directory', async () => {
    const dataDir = await tempDir();
    const port = await freePort();
    const env = { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' };
    const first = serve(env);
    try {
      await first.ready;
      const key = /API key:\s+(cqs_\w+)/.exec(first.output())?.[1];
      assert.ok(key, 'the banner shows the key');
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/product/list`, {
        headers: { authorization: `Bearer ${key}` },
      });
      assert.equal(res.status, 200);
      assert.deepEqual(
        ((await res.json()) as { products: { name: string }[] }).products.map(
          (p: { name: string }) => p.name,
        ),
        ['Demo Product'],
      );
      const logLines = first
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'));
      assert.ok(logLines.length > 0);
      assert.ok(
        !logLines.some((l) => l.includes(key)),
        'the key is printed in the banner, never in a log line',
      );

      const second = await run(['serve'], { ...env, PORT: String(await freePort()) });
      assert.equal(second.code, 3);
      assert.match(second.err, /in use by process \d+/);
    } finally {
      first.child.kill('SIGTERM');
      await new Promise((r) => first.child.once('exit', r));
    }
    // Restarted on the same directory: no second demo company, no new key.
    const again = serve({ ...env, PORT: String(await freePort()) });
    try {
      await again.ready;
      assert.ok(!again.output().includes('API key:'));
    } finally {
      again.child.kill('SIGKILL');
      await new Promise((r) => again.child.once('exit', r));
    }
    // After a SIGKILL the lock is taken over at once.
    const list = await run(['company', 'list'], { DATA_DIR: dataDir });
    assert.equal(list.code, 0, list.err);
    assert.equal(list.out.trim().split('\n').length, 1);
  });

  it('does not bootstrap with --no-bootstrap', async () => {
    const dir2 = await tempDir();
    const port = await freePort();
    const child = spawn(process.execPath, [MAIN, 'serve', '--no-bootstrap'], {
      env: { ...process.env, DATA_DIR: dir2, PORT: String(port), HOST: '127.0.0.1' },
    });
    let out = '';
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('Server listening')) resolve();
      });
    });
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    assert.ok(!out.includes('API key:'));
    const list = await run(['company', 'list'], { DATA_DIR: dir2 });
    assert.equal(list.out.trim(), '');
  });

  it('provisions with operator commands and seeds idempotently', async () => {
    const dataDir = await tempDir();
    const env = { DATA_DIR: dataDir };
    const company = JSON.parse((await run(['company', 'create', 'Acme'], env)).out);
    const user = JSON.parse(
      (
        await run(
          ['user', 'create', '--company', company.id, '--email', 'Ann@acme.test', '--role', 'agent'],
          env,
        )
      ).out,
    );
    const product = JSON.parse(
      (await run(['product', 'create', '--company', company.id, '--name', 'QA'], env)).out,
    );
    assert.equal(
      (await run(['grant', '--company', company.id, '--product', String(product.id), '--user', user.id], env))
        .code,
      0,
    );
    const key = JSON.parse(
      (await run(['key', 'create', '--company', company.id, '--user', user.id, '--scopes', 'calls'], env))
        .out,
    );
    assert.match(key.key, /^cqs_[0-9A-Za-z]{36}$/);
    const keys = (await run(['key', 'list', '--company', company.id], env)).out;
    assert.ok(!keys.includes(key.key), 'a key is shown once');
    const archived = JSON.parse(
      (await run(['product', 'archive', String(product.id), '--company', company.id], env)).out,
    );
    assert.equal(archived.status, 'archived');
    const revoked = await run(['key', 'revoke', key.id, '--company', company.id], env);
    assert.equal(revoked.code, 0);
    assert.equal((await run(['key', 'revoke', key.id, '--company', company.id], env)).code, 4);

    const file = join(dataDir, 'seed.json');
    await writeFile(
      file,
      JSON.stringify({
        companies: [
          {
            name: 'Seeded',
            users: [{ ref: 'ann', email: 'ann@seeded.test', role: 'admin' }],
            products: [{ name: 'Sales QA' }],
            api_keys: [{ user: 'ann', scopes: ['calls'] }],
          },
        ],
      }),
    );
    const first = await run(['seed', file], env);
    assert.equal(first.code, 0, first.err);
    assert.match(first.out, /new API key for ann of Seeded \(calls\): cqs_/);
    const second = await run(['seed', file], env);
    assert.match(second.out, /^0 changed/m);
    assert.ok(!second.out.includes('cqs_'));
  });
});
