import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createStringMap } from '../src/adapters/cache/string-map.ts';

describe('the string-keyed map of the long polls and subscriptions', () => {
  it('gets, sets, replaces and deletes like a Map, and counts only what it holds', () => {
    const map = createStringMap<{ n: number }>();
    const a = { n: 1 };
    map.set('a', a);
    map.set('b', { n: 2 });
    map.set('b', { n: 3 });
    assert.equal(map.get('a'), a);
    assert.equal(map.get('b')?.n, 3);
    assert.equal(map.size, 2);
    assert.equal(map.delete('a'), true);
    assert.equal(map.delete('a'), false);
    assert.equal(map.delete('never'), false);
    assert.equal(map.get('a'), undefined);
    assert.equal(map.size, 1);
    assert.deepEqual(
      map.values().map((v) => v.n),
      [3],
    );
    map.set('a', { n: 4 });
    assert.equal(map.get('a')?.n, 4);
    assert.equal(map.size, 2);
  });

  it('keeps every live entry through the clean-ups of many deleted keys, and a key deleted and added again and again', () => {
    const map = createStringMap<{ n: number }>();
    for (let i = 0; i < 1000; i++) map.set(`k${i}`, { n: i });
    for (let i = 0; i < 1000; i += 2) map.delete(`k${i}`);
    for (let round = 0; round < 500; round++) {
      map.set('hot', { n: round });
      if (round < 499) map.delete('hot');
    }
    assert.equal(map.size, 501);
    for (let i = 0; i < 1000; i++) assert.equal(map.get(`k${i}`)?.n, i % 2 === 0 ? undefined : i);
    assert.equal(map.get('hot')?.n, 499);
    for (let i = 1; i < 1000; i += 2) map.delete(`k${i}`);
    assert.equal(map.size, 1);
    assert.deepEqual(
      map.values().map((v) => v.n),
      [499],
    );
  });
});
