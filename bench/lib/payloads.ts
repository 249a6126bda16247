/** Request bodies and response checks of the create scenarios. */
import type { ResponseCheck } from './load.ts';

const SENTENCES = [
  'Thank you for calling, how can I help you today?',
  'I would like to change the delivery address of my last order.',
  'Of course. Could you give me the order number, please?',
  'It is 4711-2093, placed on Monday morning.',
  'Thank you. I can see the order; it has not shipped yet, so the address can still be changed.',
];

/** 20 transcript segments, alternating agent and customer, in seconds. */
export const TRANSCRIPT = Array.from({ length: 20 }, (_, i) => ({
  role: i % 2 === 0 ? 'agent' : 'customer',
  text: SENTENCES[i % SENTENCES.length] as string,
  start: i * 6.5,
  stop: i * 6.5 + 6,
}));

/** 5 tags of all three types. */
export const TAGS = [
  { key: 'queue', value: 'billing', type: 'string' },
  { key: 'csat', value: 4, type: 'integer' },
  { key: 'sale_closed', value: true, type: 'boolean' },
  { key: 'region', value: 'emea', type: 'string' },
  { key: 'hold_seconds', value: 35, type: 'integer' },
];

let sequence = 0;
const runId = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

/** A conversation id never used before in this run (or any other). */
export function freshConversationId(prefix = 'bench'): string {
  return `${prefix}-${runId}-${++sequence}`;
}

/** The create body of spec 4.1 with a fresh conversation_id, and the check of its 200 answer. */
export function createRequest(
  agentEmail: string,
  productId: number,
): () => { body: string; check: ResponseCheck } {
  const template = JSON.stringify({
    agent_email: agentEmail,
    product_id: productId,
    conversation_id: '\u0000ID\u0000',
    transcript: TRANSCRIPT,
    tags: TAGS,
  });
  const [head, tail] = template.split('"\\u0000ID\\u0000"') as [string, string];
  return () => {
    const id = freshConversationId();
    return {
      body: `${head}${JSON.stringify(id)}${tail}`,
      check: (status, body) => {
        if (status !== 200) return false;
        try {
          const parsed = JSON.parse(body) as { success?: unknown; conversation_id?: unknown };
          return parsed.success === true && parsed.conversation_id === id;
        } catch {
          return false;
        }
      },
    };
  };
}
