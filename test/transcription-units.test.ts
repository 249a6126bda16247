/** The pure parts of transcription: pocketsphinx's output, the merge of channels, the limiter, the WER. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { wordErrors, wordsOf } from '../scripts/transcription-wer.ts';
import { Limiter } from '../src/adapters/transcribe/limiter.ts';
import { parsePocketsphinx } from '../src/adapters/transcribe/pocketsphinx.ts';
import { mergeChannels } from '../src/domain/transcription/engine.ts';

const OUTPUT = `
<s> 0.000 0.650 1.000000
</s> 0.660 0.840 1.000000
you op ed
<s> 2.890 3.340 0.999800
you 3.350 3.460 0.292983
op(2) 3.470 5.150 0.542064
[NOISE] 5.150 5.160 0.5
ed 5.160 5.420 0.890374
</s> 5.430 5.870 1.000000
the package
<s> 8.640 8.720 0.999500
the 8.730 8.850 0.732541
<sil> 8.850 8.860 0.710889
package(2) 8.860 9.310 0.115886
</s> 10.850 11.130 1.000000
`;

describe('transcription units', () => {
  it('parses pocketsphinx utterances into segments of words, without marks, fillers or variants', () => {
    const segments = parsePocketsphinx(OUTPUT);
    assert.equal(segments.length, 2);
    assert.deepEqual(
      segments.map((s) => [s.text, s.start, s.stop]),
      [
        ['you op ed', 3.35, 5.42],
        ['the package', 8.73, 9.31],
      ],
    );
    assert.equal(segments[1]?.words?.[1]?.word, 'package');
    assert.ok(Math.abs((segments[1]?.confidence ?? 0) - (0.732541 + 0.115886) / 2) < 1e-9);
  });

  it('merges channels in time order with their roles, dropping empty text', () => {
    const merged = mergeChannels([
      {
        role: 'agent',
        segments: [
          { start: 0, stop: 2, text: ' hello ' },
          { start: 5, stop: 6, text: '' },
        ],
      },
      { role: 'customer', segments: [{ start: 1.23456, stop: 3, text: 'hi', confidence: 0.5 }] },
    ]);
    assert.deepEqual(merged, [
      { role: 'agent', text: 'hello', start: 0, stop: 2 },
      { role: 'customer', text: 'hi', start: 1.235, stop: 3, confidence: 0.5 },
    ]);
  });

  it('never runs more tasks at once than its size', async () => {
    const limiter = new Limiter(2);
    let running = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 8 }, () =>
        limiter.run(async () => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((resolve) => setImmediate(resolve));
          running--;
        }),
      ),
    );
    assert.equal(peak, 2);
  });

  it('counts word errors as an edit distance', () => {
    assert.equal(wordErrors(wordsOf('Thank you, for calling'), wordsOf('thank you for telling')), 1);
    assert.equal(wordErrors(['a', 'b', 'c'], ['a', 'c']), 1);
    assert.equal(wordErrors(['a'], ['x', 'a', 'y']), 2);
  });
});
