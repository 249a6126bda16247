/**
 * A value kept as the JSON text the database gave, to be written into an answer as it is. A call's
 * transcript (1,000 segments: 140 kB) parsed into objects and serialized again was most of a call read's
 * work and of its memory; the text was validated by the schema of the request that stored it. It comes in
 * the parts it is stored in (adapters/db/transcript-text.ts), each small enough for V8's regular heap, and
 * is written into the answer part by part, never joined into one string.
 */
export interface JsonText<T> {
  /** The text in order: their concatenation is the JSON of a `T`. */
  readonly parts: readonly string[];
  /** Never set: ties the text to the type it stands for. */
  readonly _type?: T;
}

/** Wraps JSON text of a `T`, given in parts. */
export function jsonText<T>(parts: readonly string[]): JsonText<T> {
  return { parts };
}

/**
 * The JSON text of an object with `head`'s members first, then those of `objectText` (the JSON text of an
 * object, written as it is). `head` must not name a member of `objectText`.
 */
export function jsonObjectText<T>(head: Record<string, unknown>, objectText: string): JsonText<T> {
  const members = objectText.trim().slice(1).trimStart();
  const first = JSON.stringify(head);
  if (members.startsWith('}')) return { parts: [first] };
  return { parts: [`${first.slice(0, -1)},`, members] };
}
