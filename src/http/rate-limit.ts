/**
 * Per-key rate limiting with @fastify/rate-limit: counted in process memory by default, or in Redis when
 * REDIS_URL is set so every process behind a load balancer enforces one limit. Runs after authentication
 * (the key is the counter's name); public routes are not limited. A Redis outage fails open, at once while
 * its breaker is open (`adapters/redis/shared-redis.ts`).
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.ts';

/** Registers rate limiting, unless it is configured off (RATE_LIMIT_MAX=0). */
export async function registerRateLimit(app: FastifyInstance, services: Services): Promise<void> {
  const { max, windowSeconds } = services.config.rateLimit;
  if (max === 0) return;
  const { redis } = services;
  await app.register(rateLimit, {
    global: true,
    max,
    timeWindow: windowSeconds * 1000,
    ...(redis ? { redis: redis.client, nameSpace: 'cqs-rate-limit:' } : {}),
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
