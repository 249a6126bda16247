/** Helpers of the reliability suite: figures, short mode, and the service as a real child process. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey } from '../src/domain/api-keys.ts';

/** The CLI entry point. */
export const MAIN = new URL('../src/cli/main.ts', import.meta.url).pathname;

/** True in the short mode (RELIABILITY_SHORT=1): fewer cycles and requests. */
export const SHORT = process.env.RELIABILITY_SHORT === '1';

/** Prints one figure as `FIGURE name=value`. */
export function figure(name: string, value: number | string): void {
  process.stdout.write(`FIGURE ${name}=${value}\n`);
}

/** A free loopback port. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A temporary directory. */
export function tempDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** Runs the CLI to completion. */
export function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.on('close', (code) => resolve({ code, out }));
  });
}

/** The keys a seeded company was given. */
export interface SeededKeys {
  calls: string;
  writer: string;
  agentEmail: string;
}

/** Seeds one company with an admin, an agent, a product and verbatim keys. */
export async function seedCompany(
  env: Record<string, string>,
  dir: string,
  name: string,
): Promise<SeededKeys> {
  const keys = { calls: generateApiKey(), writer: generateApiKey(), agentEmail: `agent@${name}.test` };
  const file = join(dir, `seed-${name}.json`);
  await writeFile(
    file,
    JSON.stringify({
      companies: [
        {
          name,
          users: [
            { ref: 'admin', email: `admin@${name}.test`, role: 'admin' },
            { ref: 'agent', email: keys.agentEmail, role: 'agent' },
          ],
          products: [{ name: 'QA', grant: ['agent'] }],
          api_keys: [
            { user: 'admin', scopes: ['calls'], key: keys.calls },
            { user: 'admin', scopes: ['handoff:write'], key: keys.writer },
          ],
        },
      ],
    }),
  );
  const r = await runCli(['seed', file], env);
  if (r.code !== 0) throw new Error(`seed failed: ${r.out}`);
  return keys;
}

/** A running `cqs serve` child. */
export interface Served {
  child: ChildProcess;
  port: number;
  output(): string;
  /** SIGKILLs the process and waits for it to exit. */
  kill(): Promise<void>;
}

/** Starts `cqs serve` on a free port and waits until it listens (at most 60 s). */
export async function serve(env: Record<string, string>): Promise<Served> {
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN, 'serve'], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), CQS_BOOTSTRAP: 'false', ...env },
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start: ${output}`));
    }, 60_000);
    const onData = (d: Buffer) => {
      output += d;
      if (output.includes('Server listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}: ${output}`));
    });
  });
  return {
    child,
    port,
    output: () => output,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A JSON request to a served process; network errors answer status 0. */
export async function call(
  port: number,
  method: string,
  path: string,
  key: string,
  body?: unknown,
): Promise<{ status: number; body: unknown; headers: Headers | undefined }> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, body: parsed, headers: res.headers };
  } catch {
    return { status: 0, body: undefined, headers: undefined };
  }
}

/** A random integer in [lo, hi). */
export function rand(lo: number, hi: number): number {
  return lo + Math.floor(Math.random() * (hi - lo));
}
