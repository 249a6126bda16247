/**
 * Request validation with TypeBox's compiler: bodies are checked as sent (no coercion, no silent removal
 * of unknown fields), querystrings and params are converted from text first.
 */
import { registerAjvFormats, TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox';
import type { FastifySchemaValidationError } from 'fastify';

registerAjvFormats();

/** The validator compiler every route uses. */
export const validatorCompiler = TypeBoxValidatorCompiler;

/** `/tags/0/value` → `tags[0].value`. */
export function fieldPath(instancePath: string, prefix = ''): string {
  const parts = instancePath.split('/').slice(1);
  let out = prefix;
  for (const raw of parts) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(part) ? `[${part}]` : out ? `.${part}` : part;
  }
  return out;
}

/** The outcome of formatting validation errors: a 400 when the body is not even an object. */
export interface FormattedValidation {
  status: 400 | 422;
  message: string;
  field: string | undefined;
}

/** Turns a route's validation errors into one message that names the field. */
export function formatValidation(
  errors: FastifySchemaValidationError[],
  context: string | undefined,
): FormattedValidation {
  const useful = errors.filter((e) => e.keyword !== 'boolean');
  const where = context === 'body' ? '' : context === 'querystring' ? 'query.' : context ? `${context}.` : '';
  const first = useful[0];
  if (!first) return { status: 422, message: 'invalid request', field: undefined };
  if (context === 'body' && first.instancePath === '' && first.keyword === 'type') {
    return { status: 400, message: 'request body must be a JSON object', field: undefined };
  }
  const params = first.params as Record<string, unknown>;
  if (first.keyword === 'additionalProperties') {
    const names = (params.additionalProperties as string[] | undefined) ?? [];
    const field = fieldPath(`${first.instancePath}/${names[0] ?? ''}`, where.replace(/\.$/, ''));
    return { status: 422, message: `${field}: unknown field`, field };
  }
  if (first.keyword === 'required') {
    const names = (params.requiredProperties as string[] | undefined) ?? [];
    const field = fieldPath(`${first.instancePath}/${names[0] ?? ''}`, where.replace(/\.$/, ''));
    return { status: 422, message: `${field}: is required`, field };
  }
  const field = fieldPath(first.instancePath, where.replace(/\.$/, '')) || where.replace(/\.$/, '') || 'body';
  const siblings = useful.filter((e) => e.instancePath === first.instancePath);
  const consts = siblings
    .filter((e) => e.keyword === 'const')
    .map((e) => (e.params as { const?: unknown }).const);
  let message: string;
  if (consts.length > 1 && consts.length === siblings.length) {
    message = `must be one of ${consts.map((c) => JSON.stringify(c)).join(', ')}`;
  } else {
    message = [...new Set(siblings.map((e) => e.message))].join(' or ');
  }
  return { status: 422, message: `${field}: ${message}`, field };
}
