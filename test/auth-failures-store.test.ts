import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { memoryFailureStore } from '../src/http/auth-failures.ts';

describe('the in-process count of failed authentications', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  it('counts an address within its window, and starts again after it', async () => {
    const store = memoryFailureStore(1000);
    await store.add('10.0.0.1');
    await store.add('10.0.0.1');
    mock.timers.tick(400);
    assert.deepEqual(await store.get('10.0.0.1'), { count: 2, resetMs: 600 });
    mock.timers.tick(600);
    assert.deepEqual(await store.get('10.0.0.1'), { count: 0, resetMs: 0 });
    await store.add('10.0.0.1');
    assert.equal((await store.get('10.0.0.1')).count, 1);
  });

  it('at its bound drops the windows that ended, and keeps the counts of those that have not', async () => {
    const store = memoryFailureStore(1000, 3);
    await store.add('a');
    await store.add('b');
    mock.timers.tick(600);
    await store.add('c');
    await store.add('c');
    mock.timers.tick(500); // a and b ended, c has 100 ms left
    await store.add('d');
    await store.add('e');
    assert.equal(store.getNow?.('c').count, 2);
    assert.equal(store.getNow?.('d').count, 1);
    assert.equal(store.getNow?.('e').count, 1);
  });

  it('in an address flood (every window still running) forgets the oldest addresses first', async () => {
    const store = memoryFailureStore(60_000, 1000);
    for (let i = 0; i < 1500; i++) {
      await store.add(`2001:db8::${i}`);
      mock.timers.tick(1);
    }
    assert.equal(store.getNow?.('2001:db8::0').count, 0);
    assert.equal(store.getNow?.('2001:db8::499').count, 0);
    assert.equal(store.getNow?.('2001:db8::500').count, 1);
    assert.equal(store.getNow?.('2001:db8::1499').count, 1);
  });
});
