/**
 * The web app's tag filter box (packages/app/src/tag-filter.ts): filters separated by spaces or commas, and
 * values holding either kept whole by quotes, so what the box shows is read back as the same filters (a
 * value with a space was split into two filters on any Apply, and so was a key with one).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { parseTagFilter, tagFilterText } from '../packages/app/src/tag-filter.ts';

it('reads filters separated by spaces or commas, a quoted value whole', () => {
  assert.deepEqual(parseTagFilter('sale_closed:true queue:billing'), ['sale_closed:true', 'queue:billing']);
  assert.deepEqual(parseTagFilter(' a, b ,c:1 '), ['a', 'b', 'c:1']);
  assert.deepEqual(parseTagFilter('queue:"customer care" vip'), ['queue:customer care', 'vip']);
  assert.deepEqual(parseTagFilter('note:"say \\"hi\\", then \\\\"'), ['note:say "hi", then \\']);
  assert.deepEqual(parseTagFilter(''), []);
});

it('shows filters so that reading the box back gives the same filters', () => {
  for (const filters of [
    ['sale_closed:true', 'queue:billing'],
    ['queue:customer care'],
    ['note:a,b', 'team:"x"', 'plain'],
    ['key with space'],
    ['path:C:\\calls'],
    // A key with a space, a comma or a quote (a shared URL may carry one): quoted too, else one filter
    // was read back as two.
    ['my key:val'],
    ['a,b:c d', 'x"y:1', 'k:v w', 'plain:x'],
    ['odd key:'],
  ]) {
    assert.deepEqual(parseTagFilter(tagFilterText(filters)), filters, tagFilterText(filters));
  }
  assert.equal(tagFilterText(['queue:customer care', 'vip']), 'queue:"customer care" vip');
  assert.equal(tagFilterText(['my key:val']), '"my key":val');
  assert.equal(tagFilterText(['my key:a b']), '"my key":"a b"');
});
