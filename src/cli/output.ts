/** CLI pieces that load nothing of the server: the one-line error with an exit code, and JSON output. */

/** The exit code of bad arguments or configuration (README). */
export const USAGE_EXIT = 2;

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

/**
 * A cell of text output as a terminal may show it: control characters (C0, DEL, C1) written as `\u001b`
 * and the like. A value any key holder can store (a tag, a conversation id, a webhook's answer) printed as
 * it was could move the cursor, rewrite lines, forge rows or set the terminal's title.
 */
export function plainCell(text: string): string {
  return text.replace(/\p{Cc}/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** One line of tab-separated cells, each a plainCell. */
export function tsvLine(cells: readonly string[]): string {
  return `${cells.map(plainCell).join('\t')}\n`;
}

/** Formats rows as a plain-text table: columns padded to their widest cell, two spaces apart. */
export function formatTable(headers: string[], table: string[][]): string {
  const rows = table.map((r) => r.map(plainCell));
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [headers, ...rows].map((r) => `${line(r)}\n`).join('');
}
