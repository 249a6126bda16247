/** CLI pieces that load nothing of the server: the one-line error with an exit code, and JSON output. */

/** An error the CLI reports as one line, with an exit code a script can rely on. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** Prints one JSON document per line. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}
