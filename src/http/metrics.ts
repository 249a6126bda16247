/**
 * The metrics' HTTP side: every answered request is counted by its route pattern (the raw URL would make
 * a series per id), and `GET /metrics` is served by a server of its own on METRICS_PORT, so the API port
 * never shows it and operators can keep the port private.
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { createServer } from '../adapters/http/node-http.ts';
import type { Metrics } from '../adapters/metrics/metrics.ts';

/** The route label of requests no route matched (404s of unknown paths). */
const UNMATCHED = 'unmatched';

/**
 * Counts an answer Fastify made before routing, where no hook runs (a malformed percent-encoding, a path
 * segment too long): under the unmatched route, or the requests counted would miss those 400s.
 */
export function observeUnrouted(metrics: Metrics, method: string, status: number): void {
  metrics.observeRequest(method, UNMATCHED, status, 0);
}

/** Counts every answered request of the app. */
export function installRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? UNMATCHED;
    metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });
}

/** A listening metrics server. */
export interface MetricsServer {
  /** Where it listens, e.g. http://127.0.0.1:9464 (the scrape is at `${url}/metrics`). */
  url: string;
  close(): Promise<void>;
}

/** Serves `GET /metrics` (Prometheus text format) on `host:port`; port 0 takes any free port. */
export async function startMetricsServer(
  metrics: Metrics,
  host: string,
  port: number,
): Promise<MetricsServer> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => {
        response.writeHead(200, { 'content-type': metrics.registry.contentType });
        response.end(request.method === 'HEAD' ? undefined : text);
      },
      () => response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics failed\n'),
    );
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
