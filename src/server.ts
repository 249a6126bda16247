/** Starts the service: opens the database, migrates, bootstraps a new one, listens, stops on a signal. */

import { lookup } from 'node:dns/promises';
import type { FastifyInstance } from 'fastify';
import { createLruCache } from './adapters/cache/lru.ts';
import { type Database, openDatabase } from './adapters/db/database.ts';
import { pendingDeliveryStats } from './adapters/db/repositories/webhook-deliveries.ts';
import { createChangeNotifier } from './adapters/notify/factory.ts';
import { createJobQueue, queueDepth } from './adapters/queue/queue.ts';
import { openSharedRedis } from './adapters/redis/shared-redis.ts';
import { createStorage } from './adapters/storage/factory.ts';
import { buildApp } from './app.ts';
import type { Config } from './config/config.ts';
import { type BootstrapResult, bootstrapIfEmpty } from './domain/access/bootstrap.ts';
import { createPrincipalCache } from './domain/access/principal-cache.ts';
import { createFinalRecordCache, handoffBytes } from './domain/handoffs/final-cache.ts';
import { startMetricsServer } from './http/metrics.ts';
import type { Services } from './services.ts';
import { startHandoffSweeper } from './worker/handoff-sweeper.ts';
import { startServiceWorker } from './worker/start.ts';

/** A running service. */
export interface RunningService {
  app: FastifyInstance;
  services: Services;
  url: string;
  /** The metrics server's URL (scrape `${metricsUrl}/metrics`), when METRICS_PORT is set. */
  metricsUrl?: string;
  stop(): Promise<void>;
}

/** Opens and migrates the database and makes the services. */
export async function openServices(config: Config): Promise<Services> {
  const database: Database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    timeouts: config.databaseTimeouts,
    poolSize: config.databasePoolSize,
  });
  try {
    await database.migrate();
  } catch (error) {
    await database.close();
    throw error;
  }
  let storage: Services['storage'];
  try {
    storage = await createStorage(config);
  } catch (error) {
    await database.close();
    throw error;
  }
  // ioredis and prom-client are loaded only when configured: each adds about 20 MB resident.
  const redis = config.redisUrl ? await openSharedRedis(config.redisUrl) : undefined;
  const notifier = createChangeNotifier(database, config.databaseUrl, {
    heartbeatMs: config.listenHeartbeatMs,
  });
  const metrics =
    config.metricsPort === undefined
      ? undefined
      : (await import('./adapters/metrics/metrics.ts')).createMetrics({
          ...(database.pool ? { pool: database.pool } : {}),
          queueDepth: () => queueDepth(database.db),
          pendingDeliveries: () => pendingDeliveryStats(database.db),
        });
  return {
    config,
    database,
    storage,
    notifier,
    handoffCache: createFinalRecordCache(
      createLruCache(config.handoffCacheSize, handoffBytes(config.handoffCacheBytes)),
      notifier,
      createLruCache(config.handoffPartialCacheSize, handoffBytes(config.handoffCacheBytes)),
    ),
    principalCache: createPrincipalCache({ database, notifier, capacity: config.authCacheSize }),
    queue: createJobQueue(database.db),
    ...(redis ? { redis } : {}),
    ...(metrics ? { metrics } : {}),
  };
}

/** Closes what openServices opened. */
export async function closeServices(services: Services): Promise<void> {
  services.redis?.close();
  try {
    services.handoffCache.close();
    services.principalCache.close();
    services.metrics?.close();
    await services.notifier.close();
    await services.storage.close();
  } finally {
    await services.database.close();
  }
}

/** The text shown once when the demo company was made. */
export function bootstrapBanner(result: BootstrapResult, publicUrl: string): string {
  return [
    '',
    'First start: created the demo company with an admin user and a product.',
    `  user:       ${result.email}`,
    `  product_id: ${result.productId}`,
    `  API key:    ${result.key}`,
    'This key is shown once. Try:',
    `  curl -H "Authorization: Bearer ${result.key}" ${publicUrl}/api/v1/product/list`,
    `or open ${publicUrl}/app/ in a browser and paste the key.`,
    '',
  ].join('\n');
}

/** The service could not listen where its configuration says (HOST, PORT, METRICS_PORT). */
export class ListenError extends Error {
  override name = 'ListenError';
}

/** Starts everything and listens; `print` receives the one-time bootstrap banner. */
export async function startService(
  config: Config,
  print: (text: string) => void = (text) => process.stdout.write(`${text}\n`),
): Promise<RunningService> {
  const services = await openServices(config);
  try {
    // A HOST that does not resolve is found before the demo company is made and its key printed (the
    // banner comes before "Server listening", which tools wait for); a port in use is found by listen.
    await lookup(config.host).catch((error: unknown) => {
      throw new ListenError(`cannot listen on HOST=${config.host}: ${(error as Error).message}`, {
        cause: error,
      });
    });
    if (config.bootstrap) {
      const result = await bootstrapIfEmpty(services.database.db);
      if (result) print(bootstrapBanner(result, config.publicUrl));
    }
    const app = await buildApp(services);
    const limited = config.rateLimit.max > 0 || config.authFailures.max > 0;
    if (config.databaseUrl && !config.redisUrl && limited) {
      // A PostgreSQL server is what several processes share; their limits are not, without Redis.
      app.log.warn(
        'rate limits and failed-authentication limits are counted in this process only (no REDIS_URL): ' +
          'behind a load balancer, each process allows the full limit',
      );
    }
    const url = await app.listen({ port: config.port, host: config.host }).catch(async (error: unknown) => {
      await app.close();
      throw new ListenError(
        `cannot listen on HOST=${config.host} PORT=${config.port}: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    });
    const metricsServer =
      services.metrics && config.metricsPort !== undefined
        ? await startMetricsServer(services.metrics, config.host, config.metricsPort).catch(async (error) => {
            await app.close();
            throw new ListenError(
              `cannot serve metrics on HOST=${config.host} METRICS_PORT=${config.metricsPort}: ${(error as Error).message}`,
              { cause: error },
            );
          })
        : undefined;
    if (metricsServer) app.log.info({ url: `${metricsServer.url}/metrics` }, 'metrics served');
    const sweeper = config.worker
      ? startHandoffSweeper({
          db: services.database.db,
          staleAfterSeconds: config.handoffStaleAfterSeconds,
          intervalSeconds: config.handoffSweepIntervalSeconds,
          log: app.log,
        })
      : undefined;
    const worker = config.worker ? startServiceWorker(services, app.log) : undefined;
    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= (async () => {
        // Requests stop at once (new ones are refused, long polls answered, those in flight finish) while the
        // worker finishes its jobs with the database still open, for at most SHUTDOWN_TIMEOUT. The worker
        // used to go first: a job waiting on a slow engine kept the process serving, and ready, for minutes
        // after SIGTERM. A job still running at the deadline is left to its lease, and runs again elsewhere.
        const jobs = Promise.all([worker?.stop(), sweeper?.stop()]);
        let deadline: NodeJS.Timeout | undefined;
        const timeUp = new Promise<void>((resolve) => {
          deadline = setTimeout(resolve, config.shutdownTimeoutMs);
        });
        await Promise.all([app.close(), metricsServer?.close(), Promise.race([jobs, timeUp])]);
        clearTimeout(deadline);
        await closeServices(services);
      })();
      return stopping;
    };
    return { app, services, url, ...(metricsServer ? { metricsUrl: metricsServer.url } : {}), stop };
  } catch (error) {
    await closeServices(services);
    throw error;
  }
}
