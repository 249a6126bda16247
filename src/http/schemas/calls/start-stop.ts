/** The schemas and documentation of POST /api/v1/call/start and /call/stop (spec 4.3–4.4, decision 12; beta). */
import { Type } from 'typebox';
import { namedExamples } from '../examples.ts';
import { AgentEmail, ConversationId, Metadata } from './shared.ts';

/** The body of call/stop (spec 4.3). */
export const StopCallBody = Type.Object(
  { conversation_id: ConversationId, agent_email: AgentEmail, metadata: Type.Optional(Metadata) },
  {
    additionalProperties: false,
    ...namedExamples({
      stop: {
        summary: 'Stop a call',
        value: { conversation_id: 'call-2026-0001', agent_email: 'agent@example.com' },
      },
      stop_with_metadata: {
        summary: 'Stop a call and merge metadata',
        value: {
          conversation_id: 'call-2026-0001',
          agent_email: 'agent@example.com',
          metadata: { disposition: 'resolved', hold_seconds: 42 },
        },
      },
    }),
  },
);

/** The body of call/start (spec 4.4) with the optional product_id of a call that start creates. */
export const StartCallBody = Type.Object(
  {
    conversation_id: ConversationId,
    agent_email: AgentEmail,
    metadata: Type.Optional(Metadata),
    product_id: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
        description:
          'Extension: the product to file the call under. Checked like call/create’s (not visible: 404, ' +
          'archived: 422). Without it, a call that start creates has no product (`product_id` null) until a ' +
          'call/create on the same pair sets one.',
      }),
    ),
  },
  {
    additionalProperties: false,
    ...namedExamples({
      start: {
        summary: 'Start a call (created without a product when it does not exist)',
        value: { conversation_id: 'call-2026-0001', agent_email: 'agent@example.com' },
      },
      start_with_metadata: {
        summary: 'Start a call with metadata',
        value: {
          conversation_id: 'call-2026-0001',
          agent_email: 'agent@example.com',
          metadata: { queue: 'billing', ivr_path: ['1', '3'] },
        },
      },
      start_with_product: {
        summary: 'Start a new call under a given product',
        value: { conversation_id: 'call-2026-0002', agent_email: 'agent@example.com', product_id: 1 },
      },
    }),
  },
);

/** The description of call/start. */
export const START_DESCRIPTION = [
  '**Beta**: not recommended for production.',
  '',
  'Marks the call of the agent (agent_email) with conversation_id live, and merges `metadata` into the call’s',
  'metadata (top-level keys).',
  '',
  '- The pair does not exist: the call is created, live, with start_time now. It is filed under `product_id`',
  '  when sent; otherwise it has no product (`product_id` null) until a call/create on the same pair sets one.',
  '- The call was created by call/create: it becomes live; a sent `product_id` replaces its product.',
  '- The call is live already: a no-op success; nothing changes, metadata included.',
  '- The call is stopped: 409; a stopped call does not start again.',
  '',
  'No active user with agent_email: 404; several: 409. In every error case nothing is recorded.',
].join('\n');

/** The description of call/stop. */
export const STOP_DESCRIPTION = [
  '**Beta**: not recommended for production.',
  '',
  'Marks the call of the agent (agent_email) with conversation_id stopped, and merges `metadata` into the',
  'call’s metadata (top-level keys). Stopping a stopped call is a no-op success: nothing changes, metadata',
  'included. A call may be stopped without having been started.',
  '',
  'No such call: 404. No active user with agent_email: 404; several: 409. In every error case nothing is',
  'recorded.',
].join('\n');
