/**
 * The text a call's transcript is stored as (`conversations.transcript`, json): its segments' JSON, with a
 * line break after a comma between two segments whenever a line would pass TRANSCRIPT_LINE_CHARS. JSON
 * allows the whitespace, and strings never hold a raw line break, so the lines are the parts a call read
 * gets back one row each (`string_to_table`, call-reads.ts) and writes into the answer as they are.
 *
 * Why parts: the driver makes one string of each value it reads, and V8 puts a string over 128 kB in its
 * large-object space, which on these VMs cost 470-500 µs to make (against 6-10 µs at 120 kB) and more in
 * collections; a 1,000-segment transcript is 140 kB. Reading one as 850 segments instead took the
 * service's CPU per read from 6.2-7.1 ms to 4.0-4.5 ms.
 */

/**
 * Characters after which a line of a stored transcript ends (at the next segment): one part stays under
 * V8's large-object size even as a two-byte string, unless one segment alone is longer.
 */
export const TRANSCRIPT_LINE_CHARS = 32768;

/** The JSON text a transcript of `segments` is stored as. */
export function transcriptJsonText(segments: readonly unknown[]): string {
  const lines: string[] = [];
  let line = '';
  for (const segment of segments) {
    const json = JSON.stringify(segment);
    if (line !== '' && line.length + json.length >= TRANSCRIPT_LINE_CHARS) {
      lines.push(line);
      line = '';
    }
    line = line === '' ? json : `${line},${json}`;
  }
  if (line !== '') lines.push(line);
  return `[${lines.join(',\n')}]`;
}
