import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { UnauthenticatedError } from '../src/domain/errors.ts';
import { authFailureLimiter, memoryFailureStore } from '../src/http/auth-failures.ts';
import { FailuresExhausted, lookupGate } from '../src/http/auth-lookups.ts';

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

describe('the look-ups of one address under its failure limit', () => {
  it('reads the standing again when a failure was counted after it was read, so no look-up too many starts', async () => {
    // Like the Redis store: no synchronous read, so a standing is read before the look-up is asked for.
    const { get, add } = memoryFailureStore(60_000);
    const limiter = authFailureLimiter({ get, add }, 2);
    const gate = lookupGate(limiter);
    const from = '10.0.0.1';
    const failing = () => {
      throw new UnauthenticatedError('unknown key');
    };
    // B reads its standing (2 failures left), and its look-up is asked for only later (a slow read).
    const readAtB = limiter.counted();
    const standingB = await limiter.standing(from);
    // Meanwhile A fails (1 left), and C starts a look-up that takes a while.
    await assert.rejects(gate.run(from, await limiter.standing(from), limiter.counted(), failing));
    let endC: () => void = () => {};
    const c = gate.run(from, await limiter.standing(from), limiter.counted(), async () => {
      await new Promise<void>((resolve) => {
        endC = resolve;
      });
      failing();
    });
    let lookedUpB = false;
    const b = gate.run(from, standingB, readAtB, () => {
      lookedUpB = true;
      failing();
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    // With the standing B read, it had room (one look-up under way, two failures left) and started.
    assert.equal(lookedUpB, false, 'B waits: one failure is left, and C may use it');
    endC();
    await assert.rejects(c, UnauthenticatedError);
    await assert.rejects(b, FailuresExhausted);
    assert.equal(lookedUpB, false);
    assert.deepEqual(await limiter.standing(from), { wait: 60, left: 0 });
  });
});
