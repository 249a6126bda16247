/**
 * Add tags to a call after the fact (e.g. the sale outcome from the CRM).
 *   CQS_URL=… CQS_API_KEY=… CQS_AGENT=agent@example.com node examples/tag-call.ts CONVERSATION_ID
 */
import { CqsError } from '../packages/client/src/index.ts'; // in your project: from '@cqs/client'
import { clientFromEnv, required, usage } from './env.ts';

const conversationId = process.argv[2];
if (!conversationId) usage('CQS_URL=… CQS_API_KEY=… node examples/tag-call.ts CONVERSATION_ID');
try {
  const result = await clientFromEnv().addTags({
    conversation_id: conversationId,
    agent_email: required('CQS_AGENT'),
    tags: [
      { key: 'sale', value: true, type: 'boolean' },
      { key: 'order_total', value: 129, type: 'integer' },
    ],
  });
  console.log(JSON.stringify(result));
} catch (error) {
  // A 409 names the users that share the agent's email: fix them with the operator, then retry.
  if (error instanceof CqsError && error.status === 409)
    console.error('ambiguous agent:', error.conflictingUserIds);
  throw error;
}
