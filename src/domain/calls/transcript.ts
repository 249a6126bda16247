/** Transcript segments of call/create (spec 2.2). */
import { ValidationError } from '../errors.ts';
import { NUL_CHARACTER_RULE } from '../limits.ts';
import type { Role } from './speaker.ts';

/** A segment as sent; the schema has checked the types, the roles and that offsets are not negative. */
export interface SegmentInput {
  role: Role;
  text: string;
  start: number;
  stop: number;
}

/**
 * Checks the order of each segment's offsets and that its text can be stored, and returns the segments as
 * stored, in the order sent.
 */
export function checkTranscript(segments: readonly SegmentInput[]): SegmentInput[] {
  return segments.map((s, i) => {
    if (s.start < 0) throw new ValidationError('must not be negative', `transcript[${i}].start`);
    if (s.stop < s.start) throw new ValidationError('must not be less than start', `transcript[${i}].stop`);
    if (s.text.includes('\u0000')) throw new ValidationError(NUL_CHARACTER_RULE, `transcript[${i}].text`);
    return { role: s.role, text: s.text, start: s.start, stop: s.stop };
  });
}
