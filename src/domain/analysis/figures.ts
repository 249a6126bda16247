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

/** Is `t` strictly inside one of the merged intervals? */
function inside(t: number, intervals: readonly Interval[]): boolean {
  return intervals.some((i) => t > i.start && t < i.stop);
}

/** Starts of `own` speech while `other` speaks: interruptions by the owner of `own`. */
export function countInterruptions(own: readonly Interval[], other: readonly Interval[]): number {
  return own.filter((i) => inside(i.start, other)).length;
}

/**
 * The longest run of `own` speech with gaps under 1 s bridged, cut wherever the other role starts to
 * speak inside it: a monologue is uninterrupted.
 */
export function longestMonologue(own: readonly Interval[], other: readonly Interval[]): number {
  const cuts = other.map((i) => i.start);
  let longest = 0;
  for (const run of mergeIntervals(own, MONOLOGUE_GAP_S)) {
    const points = cuts.filter((c) => c > run.start && c < run.stop).sort((a, b) => a - b);
    let from = run.start;
    for (const cut of [...points, run.stop]) {
      // Only this role's speech counts inside a piece: a piece begins where its speech begins again.
      const piece = own.filter((i) => i.stop > from && i.start < cut);
      if (piece.length > 0) {
        const first = Math.max(from, (piece[0] as Interval).start);
        const last = Math.min(cut, (piece.at(-1) as Interval).stop);
        longest = Math.max(longest, last - first);
      }
      from = cut;
    }
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
