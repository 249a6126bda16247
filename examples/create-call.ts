/**
 * Create a call with a transcript (no recording).
 *   CQS_URL=… CQS_API_KEY=… CQS_AGENT=agent@example.com CQS_PRODUCT=1 node examples/create-call.ts [conversation-id]
 */
import { clientFromEnv, required } from './env.ts';

const client = clientFromEnv();
const conversationId = process.argv[2] ?? `example-${Date.now()}`;
const result = await client.createCall({
  agent_email: required('CQS_AGENT'),
  product_id: Number(required('CQS_PRODUCT')),
  conversation_id: conversationId,
  transcript: [
    { role: 'customer', text: 'Hi, my invoice looks wrong.', start: 0, stop: 2.5 },
    { role: 'agent', text: 'Let me check that for you.', start: 2.5, stop: 4 },
  ],
  tags: [{ key: 'queue', value: 'billing', type: 'string' }],
});
console.log(JSON.stringify(result));
