/** Shared pieces of the integrator commands: the client from flags or env, exit codes, progress output. */
import type { Command } from 'commander';
import { CqsError, CqsTimeoutError } from '../../packages/client/src/index.ts';
import { CqsNodeClient } from '../../packages/client/src/node.ts';
import { CliError, printJson, USAGE_EXIT } from './output.ts';

/** Exit codes of the integrator commands (README "Client and examples"). */
export const EXIT = {
  ok: 0,
  usage: USAGE_EXIT,
  apiError: 5,
  rejected: 6,
  timeout: 7,
  serverError: 8,
} as const;

/** Flags every integrator command takes. */
export interface ConnectionFlags {
  url?: string;
  apiKey?: string;
  json?: boolean;
}

/** Adds --url, --api-key and --json. */
export function connectionOptions(command: Command): Command {
  return command
    .option('--url <url>', 'base URL of the service (default: $CQS_URL)')
    .option('--api-key <key>', 'API key (default: $CQS_API_KEY)')
    .option('--json', 'print the result as JSON');
}

/** A client from the flags or CQS_URL / CQS_API_KEY. */
export function clientFrom(flags: ConnectionFlags): CqsNodeClient {
  const baseUrl = flags.url ?? process.env.CQS_URL;
  const apiKey = flags.apiKey ?? process.env.CQS_API_KEY;
  if (!baseUrl) throw new CliError('no service URL: give --url or set CQS_URL', EXIT.usage);
  if (!apiKey) throw new CliError('no API key: give --api-key or set CQS_API_KEY', EXIT.usage);
  try {
    return new CqsNodeClient({ baseUrl, apiKey });
  } catch (error) {
    // The client refuses a key no header can carry, without quoting it.
    if (error instanceof TypeError) throw new CliError(error.message, EXIT.usage);
    throw error;
  }
}

/** Runs a command's body, mapping client errors to exit codes (and to a JSON error with --json). */
export async function runIntegrator(flags: ConnectionFlags, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    const code =
      error instanceof CliError
        ? error.exitCode
        : error instanceof CqsError
          ? error.status >= 500 || error.status === 429
            ? EXIT.serverError
            : EXIT.apiError
          : error instanceof CqsTimeoutError
            ? EXIT.timeout
            : EXIT.serverError;
    const message = error instanceof Error ? error.message : String(error);
    if (flags.json) {
      const status = error instanceof CqsError ? error.status : undefined;
      printJson({ error: message, ...(status ? { status } : {}), exit_code: code });
    }
    throw new CliError(describe(error, message), code);
  }
}

function describe(error: unknown, message: string): string {
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${message}${cause}`;
}

/** Progress on stderr: a bar redrawn in place on a terminal, a line per 10 % otherwise ("uploaded …"). */
export function progressReporter(verb = 'uploaded'): (p: { sent: number; total: number }) => void {
  const tty = process.stderr.isTTY === true;
  const started = Date.now();
  let lastTenth = -1;
  let lastDraw = 0;
  return ({ sent, total }) => {
    const fraction = total > 0 ? sent / total : 1;
    const mb = (n: number) => (n / 1e6).toFixed(1);
    const rate = sent / 1e6 / Math.max(0.001, (Date.now() - started) / 1000);
    if (tty) {
      if (sent < total && Date.now() - lastDraw < 100) return;
      lastDraw = Date.now();
      const width = 30;
      const filled = Math.round(fraction * width);
      const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
      const percent = `${Math.floor(fraction * 100)}`.padStart(3);
      process.stderr.write(`\r[${bar}] ${percent}% ${mb(sent)}/${mb(total)} MB ${rate.toFixed(1)} MB/s`);
      if (sent >= total) process.stderr.write('\n');
      return;
    }
    const tenth = Math.floor(fraction * 10);
    if (tenth === lastTenth) return;
    lastTenth = tenth;
    process.stderr.write(`${verb} ${mb(sent)} of ${mb(total)} MB (${tenth * 10}%)\n`);
  };
}
