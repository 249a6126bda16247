/**
 * A value kept as the JSON text the database gave, to be written into an answer as it is. A call's
 * transcript (1,000 segments: about 90 kB) parsed into objects and serialized again was most of a call
 * read's work and of its memory; the text was validated by the schema of the request that stored it.
 */
export interface JsonText<T> {
  readonly json: string;
  /** Never set: ties the text to the type it stands for. */
  readonly _type?: T;
}

/** Wraps JSON text of a `T`. */
export function jsonText<T>(json: string): JsonText<T> {
  return { json };
}
