/**
 * What a `cqs` process does with its imports, seen from a module hook registered before its own (so it runs
 * after theirs), and scripts run in a Node process with no hooks: the TypeBox bundle's and drizzle-orm's
 * resolve hook tests share them.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
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

/** Runs `script` (an ES module) in a new Node process with no import hooks of its own; returns its JSON. */
export function runChild(script: string): unknown {
  const env = plainEnv();
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env,
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

/**
 * Runs `cqs --help` (its help loads the serve commands, and with them the server), or `cqs` with `args`,
 * with `hooks`, the argument of `registerHooks`, as its first hooks; they may call `log(line)`. Returns the
 * lines logged.
 */
export function traceCqsHelp(dir: string, hooks: string, args: string[] = ['--help']): string[] {
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
  const run = spawnSync(process.execPath, ['--import', pathToFileURL(hook).href, CLI_MAIN, ...args], {
    env: plainEnv(),
    encoding: 'utf8',
  });
  assert.match(run.stdout, /^Usage: cqs/, run.stderr);
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}
