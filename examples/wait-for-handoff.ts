/**
 * Wait for a call-handoff record to be final (long poll, falls back to polling), for at most 5 minutes.
 *   CQS_URL=… CQS_API_KEY=… node examples/wait-for-handoff.ts HANDOFF_ID
 */
import { clientFromEnv, usage } from './env.ts';

const handoffId = process.argv[2];
if (!handoffId) usage('CQS_URL=… CQS_API_KEY=… node examples/wait-for-handoff.ts HANDOFF_ID');
const controller = new AbortController();
process.once('SIGINT', () => controller.abort(new Error('interrupted')));
const record = await clientFromEnv().waitForFinalHandoff(handoffId, {
  deadline: Date.now() + 5 * 60_000,
  signal: controller.signal,
});
console.log(JSON.stringify(record.metadata));
