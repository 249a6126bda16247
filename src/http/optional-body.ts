/**
 * Routes whose body may be left out: a route that declares `absentBodyIsEmpty` as its preValidation takes no
 * body as `{}`, and the OpenAPI document says its body is not required (@fastify/swagger says every body
 * is), so the one declaration serves both.
 */
import type { FastifyRequest, RouteOptions } from 'fastify';

/** The route's preValidation: an absent body means `{}` (`curl -X POST …/finalize`). */
export async function absentBodyIsEmpty(request: FastifyRequest): Promise<void> {
  if (request.body === undefined) request.body = {};
}

/** True when the route takes an absent body as `{}`. */
export function takesAbsentBody(route: Pick<RouteOptions, 'preValidation'>): boolean {
  return [route.preValidation].flat().includes(absentBodyIsEmpty as never);
}
