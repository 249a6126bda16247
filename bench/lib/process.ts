/** Child processes of the bench: started with `node`, waited on over HTTP, stopped by their own pid. */
import { type ChildProcess, spawn } from 'node:child_process';
import { deferCleanup } from './cleanup.ts';

/** A running child and what it printed. */
export interface Child {
  readonly name: string;
  readonly pid: number;
  readonly process: ChildProcess;
  /** The last 64 KB the child wrote to stdout and stderr. */
  output(): string;
  /** Resolves with the exit code (or the signal's name) when the child ends. */
  readonly exited: Promise<number | string>;
  /** SIGTERM, then SIGKILL after 10 s; resolves when the child is gone. */
  stop(): Promise<void>;
}

const OUTPUT_LIMIT = 64 * 1024;

/** Starts `node [nodeArgs] script [args]` with exactly `env`. */
export function spawnNode(
  name: string,
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  nodeArgs: string[] = [],
): Child {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`${name}: could not start ${script}`);
  const pid = child.pid;
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-OUTPUT_LIMIT);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  let alive = true;
  void exited.then(() => {
    alive = false;
  });
  const stop = deferCleanup(async () => {
    if (!alive) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => {
      if (alive) child.kill('SIGKILL');
    }, 10_000);
    await exited;
    clearTimeout(timer);
  });
  return {
    name,
    pid,
    process: child,
    output: () => output,
    exited,
    stop,
  };
}

/** Runs `node script args` to completion; throws with its output unless it exits 0. */
export async function runNode(name: string, script: string, args: string[], env: NodeJS.ProcessEnv) {
  const child = spawnNode(name, script, args, env);
  const code = await child.exited;
  if (code !== 0) throw new Error(`${name} exited with ${code}:\n${child.output()}`);
  return child.output();
}

/** Waits until `url` answers with `status` (any status when omitted); fails when the child exits first. */
export async function waitForHttp(child: Child, url: string, status?: number, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let exitedWith: number | string | undefined;
  void child.exited.then((code) => {
    exitedWith = code;
  });
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (exitedWith !== undefined) {
      throw new Error(`${child.name} exited with ${exitedWith} before answering:\n${child.output()}`);
    }
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (status === undefined || response.status === status) return;
      last = `status ${response.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${child.name} did not answer ${url} within ${timeoutMs} ms (${last}):\n${child.output()}`);
}
