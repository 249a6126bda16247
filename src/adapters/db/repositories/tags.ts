/** Tags of conversations. Every query is filtered by company. */
import { sql } from 'drizzle-orm';
import type { Db } from '../database.ts';
import { conversationTags } from '../schema.ts';

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

/** Inserts the tags, replacing the value and type of keys the conversation has already (one value per key). */
export async function upsertTags(
  db: Db,
  companyId: string,
  conversationUuid: string,
  tags: readonly TagValue[],
): Promise<void> {
  if (tags.length === 0) return;
  const rows = inKeyOrder(tags).map((t) => ({
    companyId,
    conversationUuid,
    key: t.key,
    type: t.type,
    value: t.value,
  }));
  await db
    .insert(conversationTags)
    .values(rows)
    .onConflictDoUpdate({
      target: [conversationTags.companyId, conversationTags.conversationUuid, conversationTags.key],
      set: { type: sql`excluded.type`, value: sql`excluded.value`, updatedAt: sql`now()` },
    });
}
