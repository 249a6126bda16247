/**
 * The stored text of a transcript (adapters/db/transcript-text.ts): the same JSON as the segments, cut into
 * lines no longer than TRANSCRIPT_LINE_CHARS unless one segment alone is, so a call read gets it in parts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TRANSCRIPT_LINE_CHARS, transcriptJsonText } from '../src/adapters/db/transcript-text.ts';

const segment = (i: number, text: string) => ({
  role: i % 2 ? 'customer' : 'agent',
  text,
  start: i,
  stop: i + 1,
});

describe('transcriptJsonText', () => {
  it('writes the segments as JSON, in lines under the limit, with no line break inside a string', () => {
    const segments = Array.from({ length: 3000 }, (_, i) =>
      segment(i, `line\nbreak ${'é📞'.repeat(i % 40)} ${i}`),
    );
    const text = transcriptJsonText(segments);
    assert.deepEqual(JSON.parse(text), segments);
    const lines = text.split('\n');
    assert.ok(lines.length > 5, `${lines.length} lines`);
    for (const line of lines) assert.ok(line.length <= TRANSCRIPT_LINE_CHARS + 2, `${line.length}`);
    // Each line but the last ends with the comma between two segments: joined without the breaks, compact.
    assert.equal(lines.join(''), JSON.stringify(segments));
  });

  it('gives a segment longer than a line a line of its own, and writes an empty transcript as []', () => {
    const long = 'x'.repeat(TRANSCRIPT_LINE_CHARS * 2);
    const segments = [segment(0, 'a'), segment(1, long), segment(2, 'b')];
    const text = transcriptJsonText(segments);
    assert.deepEqual(JSON.parse(text), segments);
    assert.equal(text.split('\n').length, 3);
    assert.equal(transcriptJsonText([]), '[]');
  });
});
