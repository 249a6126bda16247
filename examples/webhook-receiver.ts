/**
 * Receive webhooks: checks each delivery's signature with the endpoint's secret, handles each event once
 * (a retry or a redelivery carries the same webhook-id), and prints it as a JSON line.
 *   CQS_WEBHOOK_SECRET=whsec_… node examples/webhook-receiver.ts PORT
 * Register it with `cqs webhooks create http://127.0.0.1:PORT/` (the service needs WEBHOOK_ALLOW_PRIVATE=true
 * for a private address; in production, an https URL in front of it), which prints the secret.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook, WebhookVerificationError } from '../packages/client/src/index.ts'; // in your project: from '@cqs/client'
import { required, usage } from './env.ts';

const port = process.argv[2];
if (!port || !/^\d+$/.test(port)) usage('CQS_WEBHOOK_SECRET=whsec_… node examples/webhook-receiver.ts PORT');
const secret = required('CQS_WEBHOOK_SECRET');
// In a real receiver, a table with a unique key on the webhook-id, written with the work it triggers.
const handled = new Set<string>();

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', async () => {
    // Verify the body exactly as received: parsing and re-serializing it would change the signed bytes.
    const body = Buffer.concat(chunks).toString('utf8');
    try {
      const event = await verifyWebhook(body, request.headers, secret);
      if (!handled.has(event.id)) {
        handled.add(event.id);
        console.log(JSON.stringify(event));
      }
      // Answer 2xx quickly (within 15 s) and do slow work afterwards; anything else is retried.
      response.writeHead(204).end();
    } catch (error) {
      const refused = error instanceof WebhookVerificationError;
      console.error(refused ? `refused a delivery: ${error.message}` : error);
      // 400: not from the service (or not for this secret); 500: our failure, so the service retries.
      response.writeHead(refused ? 400 : 500).end();
    }
  });
});
server.listen(Number(port), '127.0.0.1', () => {
  console.error(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
});
