/**
 * Tags of conversations as the writes take them: checked, and sorted. The writes themselves are the database
 * functions call-writes.ts calls (cqs_write_tags, migration 0032).
 */

/** A checked tag: the JSON type of `value` agrees with `type`. */
export interface TagValue {
  key: string;
  type: 'string' | 'integer' | 'boolean';
  value: string | number | boolean;
}

/**
 * Tags sorted by key: rows are written in this order, so concurrent requests that share keys take their
 * row locks in the same order.
 */
export function inKeyOrder(tags: readonly TagValue[]): TagValue[] {
  return [...tags].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
