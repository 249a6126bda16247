/**
 * Authentication at the edge: a route that declares `config.scope` needs a key with that scope, sent as
 * `Authorization: Bearer` or (deprecated) `?api_key=`. Runs on request, before the body is read.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Scope } from '../domain/api-keys.ts';
import { authenticate, requireScope } from '../domain/auth.ts';
import { BadRequestError, UnauthenticatedError } from '../domain/errors.ts';
import type { Principal } from '../domain/principal.ts';
import type { Services } from '../services.ts';
import { API_KEY_QUERY_SUNSET, setDeprecationHeaders } from './deprecation.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller; set on every route that declares a scope. */
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** The scope a key needs for this route; routes without one are public. */
    scope?: Scope;
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
  app.addHook('onRequest', async (request, reply) => {
    const scope = request.routeOptions.config.scope;
    if (!scope) return;
    const { key, viaQuery } = keyFrom(request);
    if (viaQuery) setDeprecationHeaders(reply, docsUrl, API_KEY_QUERY_SUNSET);
    const principal = await authenticate(services.database.db, key);
    requireScope(principal, scope);
    request.principal = principal;
  });
}
