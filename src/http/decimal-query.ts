/**
 * Numbers in query strings as plain decimals. A route's schema would convert them loosely ('' to 0, '0x10'
 * to 16, ' 5' to 5, '1.5' to a limit of 1) and round what a double cannot hold; a query number must be
 * written as a decimal, once, and mean exactly what it says (else 422 naming it).
 */
import type { FastifyRequest } from 'fastify';
import { ValidationError } from '../domain/errors.ts';
import { isNumberKept } from './json-body.ts';

/** A non-negative integer in decimal. */
export const DECIMAL_INTEGER = /^(0|[1-9][0-9]{0,15})$/;
/** A decimal number with up to 9 decimals. */
export const DECIMAL_NUMBER = /^-?(0|[1-9][0-9]{0,15})(\.[0-9]{1,9})?$/;

/** The preValidation hook that holds the named query parameters to their patterns. */
export function decimalQuery(params: Record<string, RegExp>) {
  const entries = Object.entries(params);
  return async (request: FastifyRequest): Promise<void> => {
    const query = request.query as Record<string, unknown>;
    for (const [name, pattern] of entries) {
      const value = query[name];
      if (value === undefined) continue;
      if (typeof value !== 'string') throw new ValidationError('must be given once', `query.${name}`);
      if (!pattern.test(value)) throw new ValidationError('must be a decimal number', `query.${name}`);
      if (!isNumberKept(value)) {
        throw new ValidationError('has more digits than a number can hold exactly', `query.${name}`);
      }
    }
  };
}
