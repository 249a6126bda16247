/**
 * Per-key rate limiting with @fastify/rate-limit: counted in process memory by default, or in Redis when
 * REDIS_URL is set so every process behind a load balancer enforces one limit. Runs after authentication
 * (the key is the counter's name); public routes are not limited. A Redis outage fails open.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.ts';

/** Registers rate limiting, unless it is configured off (RATE_LIMIT_MAX=0). */
export async function registerRateLimit(app: FastifyInstance, services: Services): Promise<void> {
  const { max, windowSeconds } = services.config.rateLimit;
  if (max === 0) return;
  await app.register(rateLimit, {
    global: true,
    max,
    timeWindow: windowSeconds * 1000,
    ...(services.redis ? { redis: services.redis, nameSpace: 'cqs-rate-limit:' } : {}),
    skipOnError: true,
    keyGenerator: (request) => (request.principal ? `key:${request.principal.keyId}` : `ip:${request.ip}`),
    allowList: (request) => !request.routeOptions.config.scope,
    errorResponseBuilder: (_request, context) => ({
      statusCode: 429,
      message: `rate limit of ${context.max} requests per ${windowSeconds} s exceeded; retry in ${Math.ceil(context.ttl / 1000)} s`,
    }),
  });
}
