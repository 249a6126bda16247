/**
 * The OpenAI API's `verbose_json` transcription answer, read defensively: servers that speak the API
 * (whisper.cpp, faster-whisper servers, vLLM, the hosted API) differ in details, and a few send times as
 * strings. An answer whose segments cannot be read is not worth another attempt: the same audio gets the
 * same answer (a TypeError on it was retried as transient, 10 billable requests for one call).
 */
import { type TranscribedSegment, TranscriptionError } from '../../domain/transcription/engine.ts';

/**
 * Whisper's own rule for a window it heard no speech in (openai/whisper, `transcribe()`: `no_speech_threshold`
 * 0.6 and `logprob_threshold` -1.0): a segment is dropped when its `no_speech_prob` is above 0.6, unless its
 * `avg_logprob` is above -1 (the decoder was confident of the words all the same); without an
 * `avg_logprob`, `no_speech_prob` decides alone. What such segments hold is Whisper's hallucination in
 * silence or noise ("Thank you for watching."), which the hosted API returns rather than drops.
 */
export const NO_SPEECH_THRESHOLD = 0.6;
export const LOGPROB_THRESHOLD = -1;

/** A time or a probability: a finite number, or a string holding one ("61" is 61, never "61" + 0). */
function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && /^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/.test(value)) {
    return Number(value);
  }
  return undefined;
}

const malformed = (what: string) =>
  new TranscriptionError(`the transcription server answered a malformed transcript: ${what}`, false);

const clamp = (x: number, low: number, high: number) => Math.min(high, Math.max(low, x));

/** True when Whisper's rule says the segment is speech it made up in a window without speech. */
export function isNoSpeech(noSpeechProb: number | undefined, avgLogprob: number | undefined): boolean {
  if (noSpeechProb === undefined || noSpeechProb <= NO_SPEECH_THRESHOLD) return false;
  return !(avgLogprob !== undefined && avgLogprob > LOGPROB_THRESHOLD);
}

/**
 * The segments of a verbose_json answer for a piece of `durationS` seconds that starts `offset` seconds
 * into the channel, in the channel's time; each segment keeps the words inside it. Times are clamped to the
 * piece (a segment "ending" at 11 s in 6 s of audio ends at 6 s; one starting after the piece's end is
 * dropped), and segments Whisper's rule finds without speech are dropped. Throws a permanent
 * TranscriptionError when the answer has no segments, or a segment has no text or times that are not numbers.
 */
export function segmentsOf(body: unknown, offset: number, durationS: number): TranscribedSegment[] {
  const segments = (body as { segments?: unknown } | null)?.segments;
  if (!Array.isArray(segments)) {
    throw new TranscriptionError('the transcription server answered without segments (verbose_json)', false);
  }
  const rawWords = (body as { words?: unknown }).words;
  const words = (Array.isArray(rawWords) ? rawWords : []).flatMap((w: unknown) => {
    const word = (w as { word?: unknown } | null)?.word;
    const start = numberOf((w as { start?: unknown } | null)?.start);
    const end = numberOf((w as { end?: unknown } | null)?.end);
    // Words are an extra: one that cannot be read is left out, the segment's text has it.
    return typeof word === 'string' && start !== undefined && end !== undefined ? [{ word, start, end }] : [];
  });
  const out: TranscribedSegment[] = [];
  segments.forEach((s: unknown, i) => {
    if (typeof s !== 'object' || s === null) throw malformed(`segment ${i} is not an object`);
    const { text } = s as { text?: unknown };
    if (typeof text !== 'string') throw malformed(`segment ${i} has no text`);
    const start = numberOf((s as { start?: unknown }).start);
    const end = numberOf((s as { end?: unknown }).end);
    if (start === undefined || end === undefined)
      throw malformed(`segment ${i} has times that are not numbers`);
    const avgLogprob = numberOf((s as { avg_logprob?: unknown }).avg_logprob);
    if (isNoSpeech(numberOf((s as { no_speech_prob?: unknown }).no_speech_prob), avgLogprob)) return;
    if (start >= durationS) return;
    const from = clamp(start, 0, durationS);
    const to = clamp(end, from, durationS);
    const segment: TranscribedSegment = { start: from + offset, stop: to + offset, text: text.trim() };
    if (avgLogprob !== undefined) segment.confidence = Math.min(1, Math.exp(avgLogprob));
    const inside = words.filter((w) => w.start >= start && w.end <= end);
    if (inside.length > 0) {
      segment.words = inside.map((w) => {
        const wordStart = clamp(w.start, from, to);
        return { word: w.word.trim(), start: wordStart + offset, stop: clamp(w.end, wordStart, to) + offset };
      });
    }
    out.push(segment);
  });
  return out;
}
