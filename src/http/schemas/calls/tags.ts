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
