/**
 * Rejects JSON bodies with text PostgreSQL cannot store as JSON: lone UTF-16 surrogates. (NUL characters are
 * left to the validators, which name the field, and to the database, whose refusal the adapters turn into a 422.)
 */
import type { FastifyInstance } from 'fastify';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when every string (keys included) of a parsed JSON value is well-formed Unicode. */
export function isStorableText(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) return false;
    } else if (Array.isArray(v)) {
      for (const x of v) stack.push(x);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        stack.push(k);
        stack.push(x);
      }
    }
  }
  return true;
}

/** Installs the guard: such a body is a 422 before validation, for every route. */
export function installTextGuard(app: FastifyInstance): void {
  // A callback hook: it runs on every request, most of which (GETs) have no body, and a promise costs.
  app.addHook('preValidation', (request, reply, done) => {
    const body = request.body;
    const json =
      typeof body === 'string' ||
      Array.isArray(body) ||
      Object.getPrototypeOf(body ?? 0) === Object.prototype;
    if (json && !isStorableText(body)) {
      reply.code(422).send({ error: 'strings must be well-formed Unicode (no lone surrogates)' });
      return;
    }
    done();
  });
}
