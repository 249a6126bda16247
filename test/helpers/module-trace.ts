/**
 * What a `cqs` process does with its imports, seen from a module hook registered before its own (so it runs
 * after theirs): the TypeBox bundle's and drizzle-orm's resolve hook tests share it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI_MAIN } from './process.ts';

/** This process's environment without NODE_OPTIONS, so a child has no import hooks but its own. */
export function plainEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return env;
}

/**
 * Runs `cqs --help` (its help loads the serve commands, and with them the server) with `hooks`, the
 * argument of `registerHooks`, as its first hooks; they may call `log(line)`. Returns the lines logged.
 */
export function traceCqsHelp(dir: string, hooks: string): string[] {
  const log = join(dir, 'trace.txt');
  const hook = join(dir, 'trace-hook.mjs');
  writeFileSync(log, '');
  writeFileSync(
    hook,
    `import { registerHooks } from 'node:module';
    import { appendFileSync } from 'node:fs';
    const log = (line) => appendFileSync(${JSON.stringify(log)}, line + '\\n');
    registerHooks(${hooks});`,
  );
  const run = spawnSync(process.execPath, ['--import', pathToFileURL(hook).href, CLI_MAIN, '--help'], {
    env: plainEnv(),
    encoding: 'utf8',
  });
  assert.match(run.stdout, /serve/, run.stderr);
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}
