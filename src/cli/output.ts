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

/** Formats rows as a plain-text table: columns padded to their widest cell, two spaces apart. */
export function formatTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [headers, ...rows].map((r) => `${line(r)}\n`).join('');
}
