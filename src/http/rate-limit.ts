/**
 * Per-key rate limiting with @fastify/rate-limit: counted in process memory by default, or in Redis when
 * REDIS_URL is set so every process behind a load balancer enforces one limit. Runs after authentication
 * (the key is the counter's name); public routes are not limited. A Redis outage fails open, at once while
 * its breaker is open (`adapters/redis/shared-redis.ts`); a failed count opens the breaker too, so the
 * limiter alone (AUTH_FAILURE_MAX=0) does not hold every request for a command timeout.
 */
import rateLimit, {
  type FastifyRateLimitOptions,
  type FastifyRateLimitStore,
  type FastifyRateLimitStoreCtor,
} from '@fastify/rate-limit';
// @ts-expect-error: the plugin ships no types for its store modules; this one is a FastifyRateLimitStore.
import PluginRedisStore from '@fastify/rate-limit/store/RedisStore.js';
import type { FastifyInstance } from 'fastify';
import type { SharedRedis } from '../adapters/redis/shared-redis.ts';
import type { Services } from '../services.ts';

/** Wraps a store so that each count is asked through the breaker (its time limit, its failures). */
function throughBreaker(inner: FastifyRateLimitStore, redis: SharedRedis): FastifyRateLimitStore {
  return {
    incr(key, callback, timeWindow, max) {
      redis
        .ask(
          () =>
            new Promise<{ current: number; ttl: number } | undefined>((resolve, reject) =>
              inner.incr(key, (error, result) => (error ? reject(error) : resolve(result)), timeWindow, max),
            ),
        )
        .then(
          (result) => callback(null, result),
          (error: Error) => callback(error),
        );
    },
    child: (routeOptions) => throughBreaker(inner.child(routeOptions), redis),
  };
}

/** The plugin's Redis store (the plugin constructs it with its settings), reporting to the breaker. */
function breakerStore(redis: SharedRedis, nameSpace: string): FastifyRateLimitStoreCtor {
  return class implements FastifyRateLimitStore {
    readonly #store: FastifyRateLimitStore;
    constructor(
      settings: FastifyRateLimitOptions & { continueExceeding?: boolean; exponentialBackoff?: boolean },
    ) {
      const inner = new PluginRedisStore(
        settings.continueExceeding,
        settings.exponentialBackoff,
        redis.client,
        nameSpace,
      );
      this.#store = throughBreaker(inner, redis);
    }
    incr(...args: Parameters<FastifyRateLimitStore['incr']>): void {
      this.#store.incr(...args);
    }
    child(routeOptions: Parameters<FastifyRateLimitStore['child']>[0]): FastifyRateLimitStore {
      return this.#store.child(routeOptions);
    }
  };
}

/** Registers rate limiting, unless it is configured off (RATE_LIMIT_MAX=0). */
export async function registerRateLimit(app: FastifyInstance, services: Services): Promise<void> {
  const { max, windowSeconds } = services.config.rateLimit;
  if (max === 0) return;
  const { redis } = services;
  await app.register(rateLimit, {
    global: true,
    max,
    timeWindow: windowSeconds * 1000,
    ...(redis ? { store: breakerStore(redis, 'cqs-rate-limit:') } : {}),
    skipOnError: true,
    keyGenerator: (request) => (request.principal ? `key:${request.principal.keyId}` : `ip:${request.ip}`),
    // Public routes are not limited; nor is any route while Redis is not to be asked (the limits fail open).
    allowList: (request) => !request.routeOptions.config.scope || (redis !== undefined && !redis.usable()),
    errorResponseBuilder: (_request, context) => ({
      statusCode: 429,
      message: `rate limit of ${context.max} requests per ${windowSeconds} s exceeded; retry in ${Math.ceil(context.ttl / 1000)} s`,
    }),
  });
}
