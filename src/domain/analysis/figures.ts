/**
 * The figures of decision 28, computed from who spoke when. Pure: no I/O, so the tests can hand it made-up
 * timelines. Input is each track's raw speech (a channel of a recording, or a role's transcript segments);
 * output is the `analysis` object of a call minus its status.
 */

/** A role of a track: a channel or a transcript segment's speaker. */
export type SpeechRole = 'agent' | 'customer' | 'unknown';

/** A stretch of speech, in seconds from the start of the call. */
export interface Interval {
  start: number;
  stop: number;
}

/** One role's speech, as the `speech` array lists it. */
export interface SpeechEntry extends Interval {
  role: SpeechRole;
}

/** A figure per role; null when the roles are not known (a mono recording, an unmapped pair of channels). */
export interface PerRole<T> {
  agent: T;
  customer: T;
}

/** The figures of decision 28 (everything of `analysis` but its status, reason and source). */
export interface AnalysisFigures {
  duration_s: number;
  talk_s: { agent: number | null; customer: number | null; unknown: number };
  silence_s: number;
  overtalk_s: number | null;
  talk_ratio_agent: number | null;
  longest_monologue_s: PerRole<number | null>;
  interruptions: PerRole<number | null>;
  speech: SpeechEntry[];
}

/** Pauses shorter than this are talk, not silence (word gaps, commas). */
export const BRIDGE_PAUSE_S = 0.3;
/** A monologue goes on over gaps shorter than this. */
export const MONOLOGUE_GAP_S = 1;

/** Sorts and merges intervals that touch, overlap or are separated by less than `gap` seconds. */
export function mergeIntervals(intervals: readonly Interval[], gap = 0): Interval[] {
  const sorted = intervals.filter((i) => i.stop > i.start).sort((a, b) => a.start - b.start);
  const merged: Interval[] = [];
  // A tolerance for floating point: a pause of exactly `gap` is not bridged, touching intervals are merged.
  const limit = gap > 0 ? gap - 1e-9 : 1e-9;
  for (const { start, stop } of sorted) {
    const last = merged.at(-1);
    if (last && start - last.stop < limit) last.stop = Math.max(last.stop, stop);
    else merged.push({ start, stop });
  }
  return merged;
}

/** Total length of merged intervals. */
export function totalLength(intervals: readonly Interval[]): number {
  return intervals.reduce((sum, i) => sum + (i.stop - i.start), 0);
}

/** The overlap of two sets of merged intervals, merged. */
export function intersect(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as Interval;
    const y = b[j] as Interval;
    const start = Math.max(x.start, y.start);
    const stop = Math.min(x.stop, y.stop);
    if (stop > start) out.push({ start, stop });
    if (x.stop < y.stop) i++;
    else j++;
  }
  return out;
}

/**
 * Starts of `own` speech while `other` speaks: interruptions by the owner of `own`. Both are merged
 * intervals (sorted, disjoint), so one pass over each does: it looked through all of `other` for each of
 * `own`, and a long recording's thousands of utterances held the event loop for seconds.
 */
export function countInterruptions(own: readonly Interval[], other: readonly Interval[]): number {
  let count = 0;
  let j = 0;
  for (const { start } of own) {
    // The only interval of `other` that can hold `start` strictly inside is the first that ends after it.
    while (j < other.length && (other[j] as Interval).stop <= start) j++;
    const candidate = other[j];
    if (candidate && candidate.start < start) count++;
  }
  return count;
}

/**
 * The longest run of `own` speech with gaps under 1 s bridged, cut wherever the other role starts to
 * speak inside it: a monologue is uninterrupted. Both are merged intervals (sorted, disjoint); the pieces
 * between cuts only move forward, so two pointers into `own` find each piece's first and last speech in
 * one pass (it filtered all of `own` for every piece: quadratic, seconds of the event loop for a long call).
 */
export function longestMonologue(own: readonly Interval[], other: readonly Interval[]): number {
  const cuts = other.map((i) => i.start).sort((a, b) => a - b);
  let longest = 0;
  let c = 0; // the next cut
  let first = 0; // the first interval of `own` that ends after the piece's start
  let after = 0; // the intervals of `own` that start before the piece's end
  for (const run of mergeIntervals(own, MONOLOGUE_GAP_S)) {
    while (c < cuts.length && (cuts[c] as number) <= run.start) c++;
    let from = run.start;
    const piece = (cut: number) => {
      while (first < own.length && (own[first] as Interval).stop <= from) first++;
      while (after < own.length && (own[after] as Interval).start < cut) after++;
      // Only this role's speech counts inside a piece: a piece begins where its speech begins again.
      const head = own[first];
      if (head && head.start < cut) {
        const tail = own[after - 1] as Interval;
        longest = Math.max(longest, Math.min(cut, tail.stop) - Math.max(from, head.start));
      }
      from = cut;
    };
    while (c < cuts.length && (cuts[c] as number) < run.stop) piece(cuts[c++] as number);
    piece(run.stop);
  }
  return longest;
}

/** A track of speech: the intervals found on a channel, or a role's transcript segments. */
export interface Track {
  role: SpeechRole;
  intervals: readonly Interval[];
}

const round = (seconds: number) => Math.round(seconds * 1000) / 1000;

/**
 * Computes the figures. `tracks` holds one track per channel (or per transcript role). With tracks of
 * `agent` and `customer`, every figure is computed. With `unknown` tracks only (a mono recording, or two
 * channels whose roles are not known), per-role figures are null; two unknown tracks still give overtalk.
 */
export function computeFigures(durationS: number, tracks: readonly Track[]): AnalysisFigures {
  const bridged = tracks.map((t) => ({
    role: t.role,
    intervals: mergeIntervals(t.intervals, BRIDGE_PAUSE_S),
  }));
  const ofRole = (role: SpeechRole) =>
    mergeIntervals(bridged.filter((t) => t.role === role).flatMap((t) => t.intervals));
  const agent = ofRole('agent');
  const customer = ofRole('customer');
  const known = bridged.some((t) => t.role !== 'unknown');
  const unknownTalk = bridged
    .filter((t) => t.role === 'unknown')
    .reduce((s, t) => s + totalLength(t.intervals), 0);
  const everyone = mergeIntervals(bridged.flatMap((t) => t.intervals));
  const duration = Math.max(durationS, everyone.at(-1)?.stop ?? 0);

  let overtalk: number | null = null;
  const [first, second] = bridged;
  if (known) overtalk = totalLength(intersect(agent, customer));
  else if (first && second && bridged.length === 2) {
    overtalk = totalLength(intersect(first.intervals, second.intervals));
  }

  const agentTalk = totalLength(agent);
  const customerTalk = totalLength(customer);
  const perRole = <T>(f: (own: Interval[], other: Interval[]) => T): PerRole<T | null> =>
    known ? { agent: f(agent, customer), customer: f(customer, agent) } : { agent: null, customer: null };
  const speech = bridged
    .flatMap((t) => t.intervals.map((i) => ({ role: t.role, start: round(i.start), stop: round(i.stop) })))
    .sort((a, b) => a.start - b.start || a.role.localeCompare(b.role));

  return {
    duration_s: round(duration),
    talk_s: {
      agent: known ? round(agentTalk) : null,
      customer: known ? round(customerTalk) : null,
      unknown: round(unknownTalk),
    },
    silence_s: round(duration - totalLength(everyone)),
    overtalk_s: overtalk === null ? null : round(overtalk),
    talk_ratio_agent:
      known && agentTalk + customerTalk > 0 ? round(agentTalk / (agentTalk + customerTalk)) : null,
    longest_monologue_s: perRole((own, other) => round(longestMonologue(own, other))),
    interruptions: perRole(countInterruptions),
    speech,
  };
}
