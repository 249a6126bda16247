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
import {
  authFailureLimiter,
  failureAddress,
  memoryFailureStore,
  redisFailureStore,
  type Standing,
} from './auth-failures.ts';
import { FailuresExhausted, lookupGate, tooManyFailures } from './auth-lookups.ts';
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
  const lookups = lookupGate(failures);
  // A callback hook, not an async one: a cached key is admitted with no promise at all (it runs on every
  // request, and a promise per request measurably costs); a promise is awaited only when one is needed.
  app.addHook('onRequest', (request, reply, done) => {
    const { scope, requireAdmin: adminOnly } = request.routeOptions.config;
    if (!scope) return done();
    const address = failureAddress(request.ip);
    // What a key reads is its company's: no browser or proxy keeps it (a browser kept it past the web app's
    // sign-out) unless the route says otherwise (a final handoff record, which never changes).
    reply.header('cache-control', 'no-store');
    const tooMany = (wait: number) => {
      // Answered here: the chain stops, so `done` is not called.
      reply
        .code(429)
        .header('retry-after', String(wait))
        .send({ error: tooManyFailures(wait) });
    };
    // A failure found before any look-up (no key, a malformed one) is counted here; a look-up's, by the gate.
    const fail = (error: Error) => {
      if (!(error instanceof UnauthenticatedError)) return done(error);
      failures.failed(address).then(() => done(error), done);
    };
    const refuse = (error: Error) => (error instanceof FailuresExhausted ? tooMany(error.wait) : done(error));
    const admit = (principal: Principal) => {
      try {
        requireScope(principal, scope);
        if (adminOnly) requireAdmin(principal);
      } catch (error) {
        return done(error as Error);
      }
      request.principal = principal;
      done();
    };
    const check = (standing: Standing, readAt: number) => {
      if (standing.wait > 0) return tooMany(standing.wait);
      let found: Principal | Promise<Principal>;
      try {
        const { key, viaQuery } = keyFrom(request);
        if (viaQuery) setDeprecationHeaders(reply, docsUrl, API_KEY_QUERY_SUNSET);
        found = authenticate(services.database.db, key, services.principalCache, (lookUp) =>
          lookups.run(address, standing, readAt, lookUp),
        );
      } catch (error) {
        return fail(error as Error);
      }
      if (found instanceof Promise) found.then(admit, refuse);
      else admit(found);
    };
    const readAt = failures.counted();
    const standing = failures.standingNow(address);
    if (standing === undefined) failures.standing(address).then((s) => check(s, readAt), done);
    else check(standing, readAt);
  });
}
