/** The schema and documentation of POST /api/v1/call/add_tags (spec 4.2, decision 5). */
import { Type } from 'typebox';
import { namedExamples } from '../examples.ts';
import { AgentEmail, ConversationId, Tags } from './shared.ts';

/** The body of call/add_tags. */
export const AddTagsBody = Type.Object(
  { conversation_id: ConversationId, agent_email: AgentEmail, tags: Tags },
  {
    additionalProperties: false,
    ...namedExamples({
      typed_tags: {
        summary: 'One tag of each type',
        value: {
          conversation_id: 'call-2026-0001',
          agent_email: 'agent@example.com',
          tags: [
            { key: 'queue', type: 'string', value: 'billing' },
            { key: 'csat', type: 'integer', value: 5 },
            { key: 'escalated', type: 'boolean', value: true },
          ],
        },
      },
      replace_value: {
        summary: 'A key the call has already: its value and type are replaced',
        value: {
          conversation_id: 'call-2026-0001',
          agent_email: 'agent@example.com',
          tags: [{ key: 'csat', type: 'string', value: 'very satisfied' }],
        },
      },
    }),
  },
);

/** The description of call/add_tags. */
export const ADD_TAGS_DESCRIPTION = [
  'Adds typed tags to the call of the agent (agent_email) with conversation_id. Tags are stored one value per',
  'key: a key the call has already gets the new value and type. All tags of a request are stored, or none.',
  '',
  '- `key`: 1–128 characters; the same key twice in one request is a 422.',
  '- `type` `string`: a string of at most 4,096 characters; `integer`: a JSON integer within ±(2^53−1);',
  '  `boolean`: true or false. Any other type (such as float) is a 422.',
  '- `tags` must not be empty, and holds at most 100 tags (more: 422).',
  '',
  'No such call: 404. Several active users with agent_email: 409, and nothing is recorded.',
].join('\n');

/** The body of POST /api/v1/calls/{id}/tags: add_tags's tags, the call named by the path. */
export const CallTagsBody = Type.Object(
  { tags: Tags },
  {
    additionalProperties: false,
    examples: [{ tags: [{ key: 'qa_score', type: 'integer', value: 87 }] }],
  },
);

/** The description of POST /api/v1/calls/{id}/tags. */
export const CALL_TAGS_DESCRIPTION = [
  'Extension. Adds typed tags to the call `id`, by the rules of call/add_tags (same tags, same 422s, one',
  'value per key, all or none; the call’s `updated_at` moves and a `call.updated` event is written). The call',
  'is named by its id, not by (agent_email, conversation_id): add_tags finds the agent among the company’s',
  'active users, so a call whose agent was deactivated, or whose email a newer user holds, cannot be tagged',
  'through it. Needs the `calls` scope; the call must be one the key may read (an agent’s key: its own',
  'calls), else 404, as for `GET /api/v1/calls/{id}`.',
].join('\n');

/** The 422 cases of a tags array, named and explained (call/add_tags and POST /calls/{id}/tags). */
export const TAG_ERROR_EXAMPLES: Record<string, [summary: string, error: string]> = {
  unknown_field: ['A field the tag does not know', 'tags[0].label: unknown field'],
  empty_tags: ['No tags', 'tags: must contain at least one tag'],
  tag_type: [
    'A tag type outside string, integer, boolean',
    'tags[0].type: must be one of "string", "integer", "boolean"',
  ],
  tag_value: [
    'A tag value that disagrees with its type',
    'tags[0].value: must be true or false, as type is "boolean"',
  ],
  integer_range: ['An integer beyond ±(2^53−1)', 'tags[0].value: must be within ±9007199254740991 (2^53−1)'],
  string_length: ['A string value over 4,096 characters', 'tags[0].value: must be at most 4096 characters'],
  duplicate_tag: ['The same key twice', 'tags[1].key: "csat" is sent more than once'],
};
