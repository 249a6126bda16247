/**
 * Authentication at the edge: a route that declares `config.scope` needs a key with that scope (and, with
 * `requireAdmin`, a key whose user is an admin), sent as `Authorization: Bearer` or (deprecated)
 * `?api_key=`. Runs on request, before the body is read. Every route declares its access (checked at
 * registration by `route-access.ts`); only the not-found handler has none, and it needs no key.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authenticate, requireAdmin, requireScope } from '../domain/access/auth.ts';
import type { Principal } from '../domain/access/principal.ts';
import { BadRequestError, UnauthenticatedError } from '../domain/errors.ts';
import type { Services } from '../services.ts';
import { authFailureLimiter, memoryFailureStore, redisFailureStore } from './auth-failures.ts';
import { API_KEY_QUERY_SUNSET, setDeprecationHeaders } from './deprecation.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller; set on every route that declares a scope. */
    principal: Principal;
  }
}

function keyFrom(request: FastifyRequest): { key: string; viaQuery: boolean } {
  const header = request.headers.authorization;
  const query = request.query as Record<string, unknown> | undefined;
  const fromQuery = query?.api_key;
  if (query && 'api_key' in query) delete query.api_key;
  if (Array.isArray(fromQuery)) throw new BadRequestError('api_key given more than once');
  if (header !== undefined && fromQuery !== undefined) {
    throw new BadRequestError('send the API key either in the Authorization header or in api_key, not both');
  }
  if (header !== undefined) {
    const match = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (!match?.[1]) throw new UnauthenticatedError('Authorization must be "Bearer <API key>"');
    return { key: match[1], viaQuery: false };
  }
  if (typeof fromQuery === 'string') return { key: fromQuery, viaQuery: true };
  throw new UnauthenticatedError('API key required: send Authorization: Bearer <API key>');
}

/** Installs the authentication hook. */
export function installAuth(app: FastifyInstance, services: Services): void {
  app.decorateRequest('principal', null as unknown as Principal);
  const docsUrl = `${services.config.publicUrl}/api/v1/docs`;
  const { max, windowSeconds } = services.config.authFailures;
  const failures = authFailureLimiter(
    services.redis
      ? redisFailureStore(services.redis, windowSeconds * 1000)
      : memoryFailureStore(windowSeconds * 1000),
    max,
  );
  app.addHook('onRequest', async (request, reply) => {
    const { scope, requireAdmin: adminOnly } = request.routeOptions.config;
    if (!scope) return;
    // Most requests are answered from memory here: no promise is awaited unless one is needed.
    const wait = failures.blockedNow(request.ip) ?? (await failures.blocked(request.ip));
    if (wait > 0) {
      return reply
        .code(429)
        .header('retry-after', String(wait))
        .send({ error: `too many failed authentications from this address; retry in ${wait} s` });
    }
    let principal: Principal;
    try {
      const { key, viaQuery } = keyFrom(request);
      if (viaQuery) setDeprecationHeaders(reply, docsUrl, API_KEY_QUERY_SUNSET);
      const found = authenticate(services.database.db, key, services.principalCache);
      principal = found instanceof Promise ? await found : found;
    } catch (error) {
      if (error instanceof UnauthenticatedError) await failures.failed(request.ip);
      throw error;
    }
    requireScope(principal, scope);
    if (adminOnly) requireAdmin(principal);
    request.principal = principal;
  });
}
