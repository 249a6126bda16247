/** Helpers of the reliability suite: figures, short mode, and the service as a real child process. */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey } from '../src/domain/access/api-keys.ts';
import { freePort, runCli, serveCli } from '../test/helpers/process.ts';

/** True in the short mode (RELIABILITY_SHORT=1): fewer cycles and requests. */
export const SHORT = process.env.RELIABILITY_SHORT === '1';

/** Prints one figure as `FIGURE name=value`. */
export function figure(name: string, value: number | string): void {
  process.stdout.write(`FIGURE ${name}=${value}\n`);
}

/** A temporary directory. */
export function tempDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** The keys a seeded company was given. */
export interface SeededKeys {
  calls: string;
  writer: string;
  /** The admin's key for the event log and webhook endpoints. */
  events: string;
  agentEmail: string;
}

/** Seeds one company with an admin, an agent, a product and verbatim keys. */
export async function seedCompany(
  env: Record<string, string>,
  dir: string,
  name: string,
): Promise<SeededKeys> {
  const keys = {
    calls: generateApiKey(),
    writer: generateApiKey(),
    events: generateApiKey(),
    agentEmail: `agent@${name}.test`,
  };
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
            { user: 'admin', scopes: ['webhooks', 'events:read'], key: keys.events },
          ],
        },
      ],
    }),
  );
  const r = await runCli(['seed', file], env);
  if (r.code !== 0) throw new Error(`seed failed: ${r.out}${r.err}`);
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
  const served = serveCli({ HOST: '127.0.0.1', PORT: String(port), CQS_BOOTSTRAP: 'false', ...env });
  await served.ready;
  return { child: served.child, port, output: served.output, kill: () => served.stop('SIGKILL') };
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
