/**
 * The webhooks scenario's receiver, a process of its own (started by webhook-receiver.ts): not in the load
 * generator's process, whose event loop and CPU time would otherwise be shared between sending the load
 * and taking the deliveries. Every delivery is answered 204 at once. It keeps the first arrival of each
 * (path, webhook-id) whose event was written from `from` on (a late delivery of an earlier phase does not
 * count), with its lag from the event's `created_at`. Its counts are read over HTTP under /__bench/:
 * POST reset (answers `from`, now), GET stats, GET lags. Listens on PORT on loopback.
 */
import { createServer } from 'node:http';

let from = 0;
const seen = new Set<string>();
let lags: number[] = [];
let first = 0;
let last = 0;
/** Deliveries whose body was not an event's JSON. */
let malformed = 0;

function reset() {
  from = Date.now();
  seen.clear();
  lags = [];
  first = 0;
  last = 0;
  malformed = 0;
}

const json = (body: unknown) => JSON.stringify(body);

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (c: Buffer) => chunks.push(c));
  request.on('end', () => {
    const now = Date.now();
    if (request.url?.startsWith('/__bench/')) {
      const route = `${request.method} ${request.url}`;
      if (route === 'POST /__bench/reset') reset();
      const body =
        route === 'GET /__bench/lags'
          ? json({ lags })
          : route === 'GET /__bench/stats' || route === 'POST /__bench/reset'
            ? json({ from, delivered: seen.size, first, last, malformed })
            : undefined;
      if (body === undefined) response.writeHead(404).end();
      else response.writeHead(200, { 'content-type': 'application/json' }).end(body);
      return;
    }
    response.writeHead(204).end();
    let created: number;
    try {
      created = Date.parse(
        (JSON.parse(Buffer.concat(chunks).toString()) as { created_at: string }).created_at,
      );
    } catch {
      malformed++;
      return;
    }
    const key = `${request.url} ${request.headers['webhook-id']}`;
    if (seen.has(key) || !(created >= from)) return;
    seen.add(key);
    lags.push(now - created);
    if (first === 0) first = now;
    last = now;
  });
});
server.keepAliveTimeout = 72_000;
server.listen(Number(process.env.PORT), '127.0.0.1');
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
