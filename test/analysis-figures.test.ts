/** Decision 28's figures on hand-made timelines (the pure module: no decoding, no database). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { channelRoles } from '../src/domain/analysis/analysis.ts';
import {
  computeFigures,
  countInterruptions,
  type Interval,
  longestMonologue,
  MONOLOGUE_GAP_S,
  mergeIntervals,
} from '../src/domain/analysis/figures.ts';

const i = (start: number, stop: number) => ({ start, stop });

describe('analysis figures (decision 28)', () => {
  // The example of docs/analysis.md:
  //   agent     ████████░░████████████          ██████
  //   customer               ██████████  ░  ████      ████
  //   seconds   0    2    4    6    8   10   12   14   16   18   20
  const agent = [i(0, 4), i(4.2, 9), i(13, 16)];
  const customer = [i(8, 10.5), i(12, 14), i(15.5, 17.5)];
  const figures = computeFigures(20, [
    { role: 'agent', intervals: agent },
    { role: 'customer', intervals: customer },
  ]);

  it('bridges pauses under 0.3 s into one stretch of speech', () => {
    assert.deepEqual(
      figures.speech.filter((s) => s.role === 'agent'),
      [
        { role: 'agent', start: 0, stop: 9 },
        { role: 'agent', start: 13, stop: 16 },
      ],
    );
    assert.deepEqual(
      mergeIntervals([i(0, 1), i(1.3, 2)], 0.3),
      [i(0, 1), i(1.3, 2)],
      'a 0.3 s pause is silence',
    );
  });

  it('totals talk per role, silence and overtalk', () => {
    assert.deepEqual(figures.talk_s, { agent: 12, customer: 6.5, unknown: 0 });
    // Speech covers 0–10.5 and 12–17.5: 16 s of 20.
    assert.equal(figures.silence_s, 4);
    // Both speak 8–9, 13–14 and 15.5–16.
    assert.equal(figures.overtalk_s, 2.5);
    assert.equal(figures.talk_ratio_agent, Math.round((12 / 18.5) * 1000) / 1000);
    assert.equal(figures.duration_s, 20);
  });

  it('counts a start of speech while the other role speaks as an interruption', () => {
    // The customer starts at 8 (agent speaking) and 15.5 (agent speaking); the agent at 13 (customer speaking).
    assert.deepEqual(figures.interruptions, { agent: 1, customer: 2 });
  });

  it('measures monologues with gaps under 1 s bridged, cut where the other role starts', () => {
    // The agent's 0–9 is cut at 8 by the customer: 8 s.
    assert.equal(figures.longest_monologue_s.agent, 8);
    // The customer's 8–10.5 (2.5 s) is the longest: 12–14 is cut at 13 by the agent.
    assert.equal(figures.longest_monologue_s.customer, 2.5);
    assert.equal(longestMonologue([i(0, 3), i(3.8, 6)], []), 6, 'a 0.8 s gap does not end a monologue');
    assert.equal(longestMonologue([i(0, 3), i(4.2, 6)], []), 3, 'a 1.2 s gap does');
  });

  it('gives null ratio when nobody speaks', () => {
    const silent = computeFigures(5, [
      { role: 'agent', intervals: [] },
      { role: 'customer', intervals: [] },
    ]);
    assert.equal(silent.talk_ratio_agent, null);
    assert.equal(silent.silence_s, 5);
    assert.deepEqual(silent.interruptions, { agent: 0, customer: 0 });
  });

  it('counts a mono recording as unknown, with per-role figures null', () => {
    const mono = computeFigures(10, [{ role: 'unknown', intervals: [i(1, 3), i(3.1, 4), i(6, 8)] }]);
    assert.deepEqual(mono.talk_s, { agent: null, customer: null, unknown: 5 });
    assert.equal(mono.talk_ratio_agent, null);
    assert.equal(mono.overtalk_s, null);
    assert.deepEqual(mono.interruptions, { agent: null, customer: null });
    assert.deepEqual(mono.longest_monologue_s, { agent: null, customer: null });
    assert.equal(mono.silence_s, 5);
  });

  it('still measures overtalk on two channels whose roles are unknown', () => {
    const both = computeFigures(10, [
      { role: 'unknown', intervals: [i(0, 5)] },
      { role: 'unknown', intervals: [i(4, 8)] },
    ]);
    assert.equal(both.overtalk_s, 1);
    assert.equal(both.talk_s.unknown, 9);
    assert.equal(both.silence_s, 2);
    assert.equal(both.talk_s.agent, null);
  });

  it('takes roles from the channel map, and unknown without one', () => {
    assert.deepEqual(channelRoles(['customer', 'agent']), ['customer', 'agent']);
    assert.deepEqual(channelRoles(null), ['unknown', 'unknown']);
  });
});

/** The figures' definitions, written as directly (and as slowly) as they read: what the fast passes must equal. */
const definition = {
  interruptions: (own: readonly Interval[], other: readonly Interval[]) =>
    own.filter((x) => other.some((y) => x.start > y.start && x.start < y.stop)).length,
  monologue(own: readonly Interval[], other: readonly Interval[]) {
    let longest = 0;
    for (const run of mergeIntervals(own, MONOLOGUE_GAP_S)) {
      const cuts = other.map((y) => y.start).filter((c) => c > run.start && c < run.stop);
      let from = run.start;
      for (const cut of [...cuts.sort((a, b) => a - b), run.stop]) {
        const piece = own.filter((x) => x.stop > from && x.start < cut);
        if (piece.length > 0) {
          const first = Math.max(from, (piece[0] as Interval).start);
          const last = Math.min(cut, (piece.at(-1) as Interval).stop);
          longest = Math.max(longest, last - first);
        }
        from = cut;
      }
    }
    return longest;
  },
};

describe('interruptions and monologues in one pass', () => {
  // Merged speech of one role, on a grid of tenths so that starts and stops often coincide across roles.
  const speech = fc
    .array(fc.tuple(fc.integer({ min: 0, max: 600 }), fc.integer({ min: 1, max: 40 })), { maxLength: 60 })
    .map((pairs) => mergeIntervals(pairs.map(([at, length]) => i(at / 10, (at + length) / 10))));

  it('counts and measures as the definitions do, on any two roles’ speech', () => {
    fc.assert(
      fc.property(speech, speech, (own, other) => {
        assert.equal(countInterruptions(own, other), definition.interruptions(own, other));
        assert.equal(longestMonologue(own, other), definition.monologue(own, other));
      }),
      { numRuns: 2000 },
    );
  });
});
