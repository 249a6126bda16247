/**
 * Who may call a route, declared once in its `config` and checked when the route is registered: closed by
 * default. Every route says either `scope` (optionally `requireAdmin`) or `public: true`; a route without
 * a decision makes registration throw, so the app does not start. From the same declaration this hook
 * writes the operation's OpenAPI `security`, its 400/401/403/429/503 responses and the scope it needs;
 * `http/auth.ts` enforces it on each request.
 */
import type {
  FastifyInstance,
  FastifyPluginAsync,
  FastifyPluginCallback,
  FastifyPluginOptions,
  RouteOptions,
} from 'fastify';
import { type TSchema, Type } from 'typebox';
import { SCOPES, type Scope } from '../domain/access/api-keys.ts';
import { errorResponses } from './schemas/common.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a key needs for this route. */
    scope?: Scope;
    /** With `scope`: the key's user must also have role `admin` (else 403). */
    requireAdmin?: boolean;
    /** Anyone may call this route, without a key (docs, health, signed storage URLs). */
    public?: boolean;
  }
}

/** The security requirement of an authenticated operation: the Bearer header, or the deprecated query key. */
const SECURITY = [{ bearerAuth: [] }, { apiKeyQuery: [] }];

/** Marks the instance (and its children) whose routes are public without each saying so. */
const PUBLIC_CONTEXT = Symbol('cqs.publicContext');

/** The access decision of a route, as the onRoute hook leaves it. */
export type RouteAccess = { public: true } | { scope: Scope; requireAdmin: boolean };

/** Thrown at registration for a route whose access is missing or contradictory. */
export class RouteAccessError extends Error {}

function routeName(route: RouteOptions): string {
  return `${[route.method].flat().join(',')} ${route.url}`;
}

/** Checks the route's declaration and returns it; throws RouteAccessError when it is missing or unclear. */
function decide(route: RouteOptions, inPublicContext: boolean): RouteAccess {
  const config = route.config ?? {};
  if (config.public === true || (inPublicContext && config.scope === undefined)) {
    if (config.scope !== undefined || config.requireAdmin) {
      throw new RouteAccessError(`${routeName(route)} is declared both public and scoped`);
    }
    return { public: true };
  }
  if (config.scope === undefined) {
    throw new RouteAccessError(
      `${routeName(route)} declares no access: set config.scope (a key's scope) or config.public: true`,
    );
  }
  if (!(SCOPES as readonly string[]).includes(config.scope)) {
    throw new RouteAccessError(`${routeName(route)} declares the unknown scope "${config.scope}"`);
  }
  return { scope: config.scope, requireAdmin: config.requireAdmin === true };
}

function forbiddenResponse(access: { scope: Scope; requireAdmin: boolean }): TSchema {
  const description = access.requireAdmin
    ? `The API key lacks the \`${access.scope}\` scope, or its user is not an admin.`
    : `The API key lacks the \`${access.scope}\` scope.`;
  return Type.Object(
    { error: Type.String() },
    {
      description,
      examples: [
        { error: `API key lacks the "${access.scope}" scope` },
        ...(access.requireAdmin
          ? [{ error: "this endpoint is for admins; the API key's user is not one" }]
          : []),
      ],
    },
  );
}

/** Schemas already described, with the decision they carry (Fastify passes a GET's schema again for its HEAD). */
const described = new WeakMap<object, string>();

/** Writes the OpenAPI side of the decision into the route's schema (read later by @fastify/swagger). */
function describe(route: RouteOptions, access: RouteAccess): void {
  if (!route.schema) return;
  const seen = described.get(route.schema);
  const key = JSON.stringify(access);
  if (seen === key) return;
  if (seen !== undefined)
    throw new RouteAccessError(`${routeName(route)} shares its schema object with a route of other access`);
  described.set(route.schema, key);
  const schema = route.schema as Record<string, unknown> & { response?: Record<string, unknown> };
  if ('public' in access) {
    schema.security = [];
    return;
  }
  schema.security = SECURITY;
  // 400 (a key sent both ways), 401, 403, 429 (public routes are not rate limited) and 503 (the key is
  // looked up in the database) can answer any authenticated operation, and 413 and 415 any that reads a
  // body (one that takes none still refuses a body past BODY_LIMIT or not JSON); a route's own entry wins.
  const readsBody = [route.method].flat().some((method) => !['GET', 'HEAD', 'OPTIONS'].includes(method));
  schema.response = {
    ...errorResponses(400, 401, 429, 503, ...(readsBody ? [413, 415] : [])),
    403: forbiddenResponse(access),
    ...schema.response,
  };
  schema['x-required-scope'] = access.scope;
  if (access.requireAdmin) schema['x-admin-only'] = true;
  const needs = access.requireAdmin
    ? `Needs an API key with the \`${access.scope}\` scope whose user is an admin.`
    : `Needs an API key with the \`${access.scope}\` scope.`;
  schema.description = schema.description ? `${needs}\n\n${schema.description}` : needs;
}

/**
 * Installs the check. Call it before any route is registered: routes added earlier are not seen. The
 * decision is written back into `config` (so a route inside `registerPublic` reads `public: true`).
 */
export function installRouteAccess(app: FastifyInstance): void {
  app.addHook('onRoute', function (this: FastifyInstance, route) {
    const inPublicContext = (this as unknown as Record<symbol, unknown>)[PUBLIC_CONTEXT] === true;
    const access = decide(route, inPublicContext);
    route.config = { ...route.config, ...access };
    describe(route, access);
  });
}

/**
 * Registers a plugin whose routes we do not write (the docs page's assets) with every route public. The
 * mark is a decoration, so it reaches the plugin's own child plugins too.
 */
export async function registerPublic<Options extends FastifyPluginOptions>(
  app: FastifyInstance,
  plugin: FastifyPluginAsync<Options> | FastifyPluginCallback<Options>,
  options: Options,
): Promise<void> {
  await app.register(async (scope) => {
    scope.decorate(PUBLIC_CONTEXT as unknown as string, true);
    await scope.register(plugin, options);
  });
}

/** The access decision of a registered route, read back from its config (for tests and the route list). */
export function accessOf(config: RouteOptions['config']): RouteAccess | undefined {
  if (config?.public === true) return { public: true };
  if (config?.scope) return { scope: config.scope, requireAdmin: config.requireAdmin === true };
  return undefined;
}
