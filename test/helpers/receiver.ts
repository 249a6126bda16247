/** A local webhook receiver on 127.0.0.1 for tests: records every request and answers as told. */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** One request the receiver got. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  json: { id: string; type: string; created_at: string; data: Record<string, unknown> };
}

/** A running receiver. `answer` decides each response (default 200); it may delay or never answer. */
export interface Receiver {
  url: string;
  received: Received[];
  answer: (request: Received, response: ServerResponse, index: number) => void | Promise<void>;
  /** Waits until `predicate` holds over the received requests. */
  waitFor(predicate: (received: Received[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts a receiver, on `port` when given (a receiver that comes back where it was), else on a free one. */
export async function startReceiver(port = 0): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    received: [],
    answer: (_request, response) => {
      response.writeHead(200).end('ok');
    },
    async waitFor(predicate, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(receiver.received)) {
        if (Date.now() > deadline) {
          throw new Error(
            `receiver: condition not met; got ${receiver.received.map((r) => r.json.type).join(', ')}`,
          );
        }
        await sleep(20);
      }
    },
    close: async () => {},
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const entry: Received = { headers: request.headers, body, json: JSON.parse(body) };
      receiver.received.push(entry);
      void receiver.answer(entry, response, receiver.received.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}
