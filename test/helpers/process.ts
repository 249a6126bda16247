/**
 * Child processes for the tests, the bench and the reliability suite: a free port, the `cqs` command run to
 * completion, and `cqs serve` waited on until it listens. One copy of each, shared by test/, bench/ and
 * reliability/.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The CLI entry point. */
export const CLI_MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** This process's environment with `env` over it, for a child that is not a test of this run. */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const merged: NodeJS.ProcessEnv = { ...process.env, ...env };
  // Otherwise a child started under `node --test` believes it is a test file of this run.
  delete merged.NODE_TEST_CONTEXT;
  return merged;
}

/** What a `cqs` run printed, and how it ended. */
export interface CliRun {
  code: number | null;
  out: string;
  err: string;
}

/**
 * Starts `cqs args` with `env` over this process's environment (in `cwd` when given); `exited()` says
 * whether it has ended.
 */
export function startCli(
  args: string[],
  env: Record<string, string>,
  cwd?: string,
): { done: Promise<CliRun>; exited(): boolean } {
  const child = spawn(process.execPath, [CLI_MAIN, ...args], { env: childEnv(env), ...(cwd ? { cwd } : {}) });
  let out = '';
  let err = '';
  let exited = false;
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    err += d;
  });
  const done = new Promise<CliRun>((resolve) =>
    child.on('close', (code) => {
      exited = true;
      resolve({ code, out, err });
    }),
  );
  return { done, exited: () => exited };
}

/** Runs `cqs args` to completion with `env` over this process's environment (in `cwd` when given). */
export function runCli(args: string[], env: Record<string, string>, cwd?: string): Promise<CliRun> {
  return startCli(args, env, cwd).done;
}

/** A `cqs serve` child. */
export interface ServeProcess {
  child: ChildProcess;
  /** Everything the child wrote to stdout and stderr so far (all of it: log checks read it whole). */
  output(): string;
  /** Resolves once the child logs that it listens; rejects if it exits first or after 60 s (it is killed). */
  ready: Promise<void>;
  /** Sends `signal` (SIGTERM by default, SIGKILL 10 s later) unless the child has exited; waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts `cqs serve [args]` with `env` over this process's environment. Readiness is Fastify's "Server
 * listening" log line, so LOG_LEVEL must be info or lower (the default); anything the process printed
 * before (the bootstrap banner) is then in `output()`.
 */
export function serveCli(env: Record<string, string>, args: string[] = []): ServeProcess {
  const child = spawn(process.execPath, [CLI_MAIN, 'serve', ...args], { env: childEnv(env) });
  let output = '';
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start within 60 s: ${output}`));
    }, 60_000);
    const onData = (d: Buffer) => {
      output += d.toString();
      if (output.includes('Server listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code ?? signal}: ${output}`));
    });
  });
  // A caller that stops the child before it is ready must not see an unhandled rejection.
  ready.catch(() => {});
  return {
    child,
    output: () => output,
    ready,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      // A process that does not end on SIGTERM within 10 s is killed.
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/**
 * Starts `cqs serve` with `env`, and answers its `/proc/<pid>/<entry>` (Linux) once it listens, split at
 * NULs: what the process really runs with after re-executing itself. Stops it before answering.
 */
export async function servedProcEntry(
  env: Record<string, string>,
  entry: 'cmdline' | 'environ',
): Promise<string[]> {
  const served = serveCli(env);
  try {
    await served.ready;
    const pid = served.child.pid;
    if (pid === undefined) throw new Error('the served child has no pid');
    return (await readFile(`/proc/${pid}/${entry}`, 'utf8')).split('\0');
  } finally {
    await served.stop();
  }
}
