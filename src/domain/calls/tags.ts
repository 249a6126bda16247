/** Typed tags of a call (spec 2.3, decision 5) and call/add_tags (spec 4.2). */
import type { Db } from '../../adapters/db/database.ts';
import { writeAddedTags, writeTagsOfCall } from '../../adapters/db/repositories/call-writes.ts';
import type { TagValue } from '../../adapters/db/repositories/tags.ts';
import type { Principal } from '../access/principal.ts';
import { ValidationError } from '../errors.ts';
import { callCheckError } from './checks.ts';
import { findVisible } from './visibility.ts';

/** The tag types of decision 5, in the order the API lists them. */
export const TAG_TYPES = ['string', 'integer', 'boolean'] as const;
/** A tag as a request sends it; the schema has already checked the shapes. */
export interface TagInput {
  key: string;
  type: (typeof TAG_TYPES)[number];
  value: string | number | boolean;
}

/** The longest string value, in characters (code points). */
export const MAX_STRING_TAG_LENGTH = 4096;

function checkValue(tag: TagInput, field: string): void {
  const { type, value } = tag;
  if (type === 'integer') {
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      throw new ValidationError('must be an integer, as type is "integer"', field);
    }
    if (!Number.isSafeInteger(value)) {
      throw new ValidationError(`must be within ±${Number.MAX_SAFE_INTEGER} (2^53−1)`, field);
    }
  } else if (type === 'boolean') {
    if (typeof value !== 'boolean')
      throw new ValidationError('must be true or false, as type is "boolean"', field);
  } else {
    if (typeof value !== 'string') throw new ValidationError('must be a string, as type is "string"', field);
    if ([...value].length > MAX_STRING_TAG_LENGTH) {
      throw new ValidationError(`must be at most ${MAX_STRING_TAG_LENGTH} characters`, field);
    }
  }
}

/** Checks what the schema cannot: values agree with types, and no key twice. `field` names the array. */
export function checkTags(tags: readonly TagInput[], field = 'tags'): TagValue[] {
  const seen = new Set<string>();
  return tags.map((tag, i) => {
    if (seen.has(tag.key)) {
      throw new ValidationError(`${JSON.stringify(tag.key)} is sent more than once`, `${field}[${i}].key`);
    }
    seen.add(tag.key);
    checkValue(tag, `${field}[${i}].value`);
    return { key: tag.key, type: tag.type, value: tag.value };
  });
}

/** call/add_tags: upserts the tags of the (agent, conversation_id) pair, all or nothing. */
export async function addTags(
  db: Db,
  principal: Principal,
  input: { agent_email: string; conversation_id: string; tags: TagInput[] },
): Promise<void> {
  if (input.tags.length === 0) throw new ValidationError('must contain at least one tag', 'tags');
  const tags = checkTags(input.tags);
  // One statement: the agent, the pair's call, its tags and the event, all or nothing.
  const names = { agentEmail: input.agent_email, conversationId: input.conversation_id };
  const written = await writeAddedTags(db, principal.companyId, { ...names, tags });
  if (written.outcome !== 'ok') throw callCheckError(written, names);
}

/**
 * POST /calls/{id}/tags: add_tags's rules on the call `id`, which the principal must be able to read
 * (NotFoundError otherwise, as for reading it); one statement, all or nothing.
 */
export async function addTagsToCall(
  db: Db,
  principal: Principal,
  id: string,
  input: TagInput[],
): Promise<void> {
  if (input.length === 0) throw new ValidationError('must contain at least one tag', 'tags');
  const tags = checkTags(input);
  await findVisible(principal, id, async (callUuid, agentUserId) =>
    (await writeTagsOfCall(db, principal.companyId, { callUuid, agentUserId, tags })) ? true : undefined,
  );
}
