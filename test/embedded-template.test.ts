/**
 * A first embedded start loads the archive of an empty database that `npm install` made, instead of running
 * initdb (which peaked at about 1 GB resident): the archive is named by the installed PGlite's version, a
 * new directory opened from it is a database that keeps its data, and a directory that holds anything is
 * never overwritten by it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { openDatabase } from '../src/adapters/db/database.ts';
import { templateFor, templatePath } from '../src/adapters/db/pglite-template.ts';
import { runCli } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

/** The version of the installed PGlite, read from its own package.json. */
async function pgliteVersion(): Promise<string> {
  let dir = dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')));
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
  return (JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

const rowsOf = (result: unknown) => (result as { rows: Record<string, unknown>[] }).rows;

/** The cluster's system identifier: initdb draws a new one for every database it creates. */
async function systemIdentifier(dataDir: string, write?: string): Promise<{ id: string; names: string[] }> {
  const database = await openDatabase({ dataDir });
  try {
    await database.migrate();
    if (write) await database.db.execute(sql`insert into companies (name) values (${write})`);
    const id = await database.db.execute(sql`select system_identifier::text as id from pg_control_system()`);
    const names = await database.db.execute(sql`select name from companies order by name`);
    return { id: String(rowsOf(id)[0]?.id), names: rowsOf(names).map((r) => String(r.name)) };
  } finally {
    await database.close();
  }
}

describe('the archive a first embedded start loads', () => {
  const makeDir = tempDirs();
  const tempDir = () => makeDir('cqs-template-');

  it('is made by `cqs embedded-template`, named by the installed PGlite version', async () => {
    const { code, out } = await runCli(['embedded-template'], {});
    assert.equal(code, 0);
    assert.equal(out.trim(), templatePath());
    assert.ok(existsSync(templatePath()));
    assert.equal(basename(templatePath()), `pglite-${await pgliteVersion()}-empty.tar.gz`);
  });

  it('makes every new data directory: one cluster, each keeping its own data', async () => {
    const [a, b] = [await tempDir(), await tempDir()];
    const first = await systemIdentifier(a, 'Alpha Co');
    const second = await systemIdentifier(b, 'Beta Co');
    // Both were loaded from one archive (initdb would have drawn two identifiers)…
    assert.equal(first.id, second.id);
    assert.deepEqual(first.names, ['Alpha Co']);
    assert.deepEqual(second.names, ['Beta Co']);
    // …and reopened, each is the database it was.
    const again = await systemIdentifier(a);
    assert.deepEqual(again, first);
  });

  it('makes anew a database whose first start was killed while it was being made', async () => {
    // A real first start, killed (SIGKILL: no handler runs) as soon as the archive's first file is there.
    const dataDir = await tempDir();
    const dir = join(dataDir, 'pglite');
    const bin = fileURLToPath(new URL('../bin/cqs.js', import.meta.url));
    const child = spawn(process.execPath, [bin, 'serve'], {
      env: { ...process.env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    while (!existsSync(join(dir, 'PG_VERSION'))) await new Promise((resolve) => setTimeout(resolve, 2));
    child.kill('SIGKILL');
    await exited;
    // Before the first start's mark, every later start failed ("PGlite failed to initialize properly").
    const made = await systemIdentifier(dataDir, 'After Co');
    assert.ok(made.names.includes('After Co'));
    // And a directory that a first start left with its mark and half a database, the same.
    const half = await tempDir();
    await mkdir(join(half, 'pglite', 'base', '1'), { recursive: true });
    await writeFile(join(half, 'pglite', 'PG_VERSION'), '17\n');
    await writeFile(join(half, 'pglite', 'cqs-first-start'), '');
    assert.deepEqual((await systemIdentifier(half, 'Half Co')).names, ['Half Co']);
    assert.equal(existsSync(join(half, 'pglite', 'cqs-first-start')), false, 'the mark goes once it is made');
  });

  it('is never loaded into a directory that holds anything but its lock', async () => {
    const dir = await tempDir();
    assert.ok(templateFor(dir) instanceof Blob);
    await writeFile(join(dir, 'cqs.lock'), '{}');
    assert.ok(templateFor(dir) instanceof Blob);
    await mkdir(join(dir, 'base'));
    assert.equal(templateFor(dir), undefined);
  });
});
