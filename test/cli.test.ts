/** The `cqs` command as a user runs it: a real process, real output, real exit codes. */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { acquireDirectoryLock } from '../src/adapters/db/directory-lock.ts';
import { freePort, runCli, serveCli } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

describe('cqs command line', () => {
  const makeDir = tempDirs();
  const tempDir = () => makeDir('cqs-cli-');

  it('lists its commands in --help', async () => {
    const { code, out } = await runCli(['--help'], {});
    assert.equal(code, 0);
    for (const command of ['serve', 'migrate', 'company', 'user', 'product', 'grant', 'key', 'seed']) {
      assert.match(out, new RegExp(`\\b${command}\\b`), command);
    }
  });

  it('stops with a message naming each bad variable', async () => {
    const { code, err } = await runCli(['migrate'], {
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
    const first = serveCli(env);
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

      const second = await runCli(['serve'], { ...env, PORT: String(await freePort()) });
      assert.equal(second.code, 3);
      assert.match(second.err, /in use by process \d+/);
    } finally {
      await first.stop();
    }
    // Restarted on the same directory: no second demo company, no new key.
    const again = serveCli({ ...env, PORT: String(await freePort()) });
    try {
      await again.ready;
      assert.ok(!again.output().includes('API key:'));
    } finally {
      await again.stop('SIGKILL');
    }
    // After a SIGKILL the lock is taken over at once.
    const list = await runCli(['company', 'list'], { DATA_DIR: dataDir });
    assert.equal(list.code, 0, list.err);
    assert.equal(list.out.trim().split('\n').length, 1);
  });

  it('does not bootstrap with --no-bootstrap, and listens on 127.0.0.1 unless HOST says otherwise', async () => {
    const dir2 = await tempDir();
    const port = await freePort();
    // HOST empty is HOST unset: the default applies.
    const served = serveCli({ DATA_DIR: dir2, PORT: String(port), HOST: '' }, ['--no-bootstrap']);
    await served.ready;
    await served.stop();
    const out = served.output();
    assert.ok(!out.includes('API key:'));
    assert.ok(out.includes(`Server listening at http://127.0.0.1:${port}`), out);
    const list = await runCli(['company', 'list'], { DATA_DIR: dir2 });
    assert.equal(list.out.trim(), '');
  });

  it('checks ids before any query: a clear message, exit 2, never SQL', async () => {
    const env = { DATA_DIR: await tempDir() };
    const company = JSON.parse((await runCli(['company', 'create', 'Acme'], env)).out).id as string;
    const cases: [string[], RegExp][] = [
      [['user', 'list', '--company', '1'], /--company: "1" is not a company id; company ids are UUIDs/],
      [['key', 'list', '--company', 'acme'], /cqs company list/],
      [['user', 'deactivate', '42', '--company', company], /USER_ID: "42" is not a user id/],
      [['key', 'revoke', 'k1', '--company', company], /KEY_ID: "k1" is not a key id/],
      [['key', 'create', '--company', company, '--user', 'ann'], /--user: "ann" is not a user id/],
      [['product', 'archive', 'x', '--company', company], /"x" is not a product id/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args, env);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.err}`);
      assert.match(result.err, message);
      assert.doesNotMatch(result.err, /select|update|insert|Failed query/i);
    }
  });

  it('checks ids before it opens the database, and says a duplicate product name is a conflict', async () => {
    const env = { DATA_DIR: await tempDir() };
    const company = JSON.parse((await runCli(['company', 'create', 'Acme'], env)).out).id as string;
    const created = await runCli(['product', 'create', '--company', company, '--name', 'P1'], env);
    assert.equal(created.code, 0, created.err);
    const again = await runCli(['product', 'create', '--company', company, '--name', 'P1'], env);
    assert.equal(again.code, 4, again.err);
    assert.match(again.err, /has a product of that name already/);
    assert.doesNotMatch(again.err, /duplicate key|constraint/);
    // The directory held by another process (this one): a bad id is still a usage error, not "in use".
    const lock = acquireDirectoryLock(join(env.DATA_DIR, 'pglite'));
    try {
      const cases: [string[], RegExp][] = [
        [
          ['user', 'deactivate', 'not-a-uuid', '--company', company],
          /USER_ID: "not-a-uuid" is not a user id/,
        ],
        [['product', 'archive', '99999999999999999999', '--company', company], /is not a product id/],
        [['product', 'unarchive', 'x', '--company', company], /is not a product id/],
        [['grant', '--company', company, '--product', 'p', '--user', company], /is not a product id/],
        [['key', 'revoke', 'k1', '--company', company], /KEY_ID: "k1" is not a key id/],
      ];
      for (const [args, message] of cases) {
        const result = await runCli(args, env);
        assert.equal(result.code, 2, `${args.join(' ')}: ${result.err}`);
        assert.match(result.err, message);
      }
    } finally {
      lock.release();
    }
  });

  it('names HOST when it cannot listen, before it makes the demo company and prints a key', async () => {
    const env = { DATA_DIR: await tempDir(), HOST: 'no-such-host.invalid', PORT: String(await freePort()) };
    const served = await runCli(['serve'], env);
    assert.equal(served.code, 1, served.err);
    assert.match(served.err, /cannot listen on HOST=no-such-host\.invalid: /);
    assert.ok(!served.out.includes('API key:'), served.out);
    const list = await runCli(['company', 'list'], { DATA_DIR: env.DATA_DIR });
    assert.equal(list.out.trim(), '', 'no demo company was made');
  });

  it('exits with 2 on a usage error of any command (unknown option, missing argument or option)', async () => {
    const env = { DATA_DIR: await tempDir() };
    for (const args of [
      ['company', 'update'],
      ['company', 'update', 'x'],
      ['key', 'create', '--bogus'],
      ['migrate', '--bogus'],
      ['calls', 'list', '--bogus'],
      ['no-such-command'],
    ]) {
      const result = await runCli(args, env);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.err}`);
    }
    assert.equal((await runCli(['company', '--help'], env)).code, 0);
  });

  it('provisions with operator commands and seeds idempotently', async () => {
    const dataDir = await tempDir();
    const env = { DATA_DIR: dataDir };
    const company = JSON.parse((await runCli(['company', 'create', 'Acme'], env)).out);
    const user = JSON.parse(
      (
        await runCli(
          ['user', 'create', '--company', company.id, '--email', 'Ann@acme.test', '--role', 'agent'],
          env,
        )
      ).out,
    );
    const product = JSON.parse(
      (await runCli(['product', 'create', '--company', company.id, '--name', 'QA'], env)).out,
    );
    assert.equal(
      (
        await runCli(
          ['grant', '--company', company.id, '--product', String(product.id), '--user', user.id],
          env,
        )
      ).code,
      0,
    );
    const key = JSON.parse(
      (await runCli(['key', 'create', '--company', company.id, '--user', user.id, '--scopes', 'calls'], env))
        .out,
    );
    assert.match(key.key, /^cqs_[0-9A-Za-z]{36}$/);
    const keys = (await runCli(['key', 'list', '--company', company.id], env)).out;
    assert.ok(!keys.includes(key.key), 'a key is shown once');
    const archived = JSON.parse(
      (await runCli(['product', 'archive', String(product.id), '--company', company.id], env)).out,
    );
    assert.equal(archived.status, 'archived');
    const revoked = await runCli(['key', 'revoke', key.id, '--company', company.id], env);
    assert.equal(revoked.code, 0);
    assert.equal((await runCli(['key', 'revoke', key.id, '--company', company.id], env)).code, 4);

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
    const first = await runCli(['seed', file], env);
    assert.equal(first.code, 0, first.err);
    assert.match(first.out, /new API key for ann of Seeded \(calls\): cqs_/);
    const second = await runCli(['seed', file], env);
    assert.match(second.out, /^0 changed/m);
    assert.ok(!second.out.includes('cqs_'));
  });

  it('lists keys as a table and revokes a key by its id or by the key itself', async () => {
    const env = { DATA_DIR: await tempDir() };
    const company = JSON.parse((await runCli(['company', 'create', 'Leaky'], env)).out);
    const user = JSON.parse(
      (
        await runCli(
          ['user', 'create', '--company', company.id, '--email', 'ops@leaky.test', '--role', 'admin'],
          env,
        )
      ).out,
    );
    const create = async () =>
      JSON.parse(
        (
          await runCli(
            ['key', 'create', '--company', company.id, '--user', user.id, '--scopes', 'calls'],
            env,
          )
        ).out,
      );
    const [byKey, byId] = [await create(), await create()];
    // The operator found byKey in a log: the key itself names it.
    const leaked = await runCli(['key', 'revoke', byKey.key, '--company', company.id], env);
    assert.equal(leaked.code, 0, leaked.err);
    assert.equal(JSON.parse(leaked.out).id, byKey.id);
    assert.equal((await runCli(['key', 'revoke', byId.id, '--company', company.id], env)).code, 0);
    const wrongChecksum = `${byKey.key.slice(0, -1)}${byKey.key.endsWith('0') ? '1' : '0'}`;
    const refused = await runCli(['key', 'revoke', wrongChecksum, '--company', company.id], env);
    assert.notEqual(refused.code, 0);
    assert.match(refused.err, /checksum/);

    const table = (await runCli(['key', 'list', '--company', company.id], env)).out.split('\n');
    assert.match(table[0] ?? '', /^ID\s+PREFIX\s+USER\s+SCOPES\s+CREATED\s+REVOKED$/);
    for (const k of [byKey, byId]) {
      const line = table.find((l) => l.startsWith(k.id)) ?? '';
      assert.match(line, /ops@leaky\.test\s+calls\s+\d{4}-\d\d-\d\dT\S+Z\s+\d{4}-\d\d-\d\dT\S+Z$/);
      assert.ok(line.includes(k.key.slice(0, 8)), 'the prefix is shown');
      assert.ok(!line.includes(k.key), 'never the key');
    }
    const json = (await runCli(['key', 'list', '--company', company.id, '--json'], env)).out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(json.length, 2);
    assert.ok(json.every((k) => k.revokedAt !== null && k.userEmail === 'ops@leaky.test'));
  });

  it('issues keys with the scopes of decision 22 and refuses an unknown scope', async () => {
    const env = { DATA_DIR: await tempDir() };
    const company = JSON.parse((await runCli(['company', 'create', 'Scoped'], env)).out);
    const user = JSON.parse(
      (
        await runCli(
          ['user', 'create', '--company', company.id, '--email', 'a@s.test', '--role', 'admin'],
          env,
        )
      ).out,
    );
    const scopes = 'handoff:write,calls:read,calls:delete,events:read,webhooks';
    const wide = await runCli(
      ['key', 'create', '--company', company.id, '--user', user.id, '--scopes', scopes],
      env,
    );
    assert.equal(wide.code, 0, wide.err);
    assert.deepEqual(JSON.parse(wide.out).scopes, scopes.split(','));
    const unknown = await runCli(
      ['key', 'create', '--company', company.id, '--user', user.id, '--scopes', 'calls:write'],
      env,
    );
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.err, /unknown scope "calls:write"/);
  });
});
