/**
 * Request validation with TypeBox's compiler: bodies are checked as sent (no coercion, no silent removal
 * of unknown fields), querystrings and params are converted from text first.
 */
import { Format, registerAjvFormats } from '@fastify/type-provider-typebox';
import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { UUID } from '../domain/uuid.ts';

registerAjvFormats();
// ajv-formats' uuid takes a `urn:uuid:` prefix too, which PostgreSQL's uuid type does not: such an id passed
// validation and ended in a 500. A uuid is the 36 characters PostgreSQL reads, and nothing else.
Format.Set('uuid', (value) => UUID.test(value));

/**
 * The validator compiler every route uses: the provider's `TypeBoxValidatorCompiler`, except that a
 * querystring, params or headers value is checked as it came before it is converted. Most requests send
 * them already valid (a string id, a string header), and `Value.Convert` walks the schema and copies the
 * value on every request; only a value that fails (`?wait=5` for a number) is converted and checked again.
 */
export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const typeCheck = Compile(schema);
  return (value: unknown) => {
    // `true`, not `{ value }`: Fastify assigns a returned value back to the request, and an assigned
    // `request.headers` makes every later read of it a fresh merged copy of all the headers.
    if (typeCheck.Check(value)) return true;
    if (httpPart === 'body') return { error: typeCheck.Errors(value) as FastifySchemaValidationError[] };
    const converted = Value.Convert(schema, value);
    if (typeCheck.Check(converted)) return { value: converted };
    return { error: typeCheck.Errors(converted) as FastifySchemaValidationError[] };
  };
};

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
  // A union reports each branch and then an `anyOf` summary; the branches say more, so the summary goes.
  const atPath = useful.filter((e) => e.instancePath === first.instancePath);
  const branches = atPath.filter((e) => e.keyword !== 'anyOf');
  const siblings = branches.length > 0 ? branches : atPath;
  // TypeBox names the constant `allowedValue`; Ajv names it `const`.
  const consts = siblings
    .filter((e) => e.keyword === 'const')
    .map((e) => {
      const p = e.params as { const?: unknown; allowedValue?: unknown };
      return 'allowedValue' in p ? p.allowedValue : p.const;
    });
  const allowed = (siblings[0]?.params as { allowedValues?: unknown[] } | undefined)?.allowedValues;
  let message: string;
  if (consts.length > 1 && consts.length === siblings.length) {
    message = `must be one of ${consts.map((c) => JSON.stringify(c)).join(', ')}`;
  } else if (siblings.length === 1 && siblings[0]?.keyword === 'enum' && Array.isArray(allowed)) {
    message = `must be one of ${allowed.map((c) => JSON.stringify(c)).join(', ')}`;
  } else if (siblings.length > 1 && siblings.every((e) => e.keyword === 'type')) {
    message = `must be ${siblings.map((e) => (e.params as { type?: string }).type).join(' or ')}`;
  } else {
    message = [...new Set(siblings.map((e) => e.message))].join(' or ');
  }
  return { status: 422, message: `${field}: ${message}`, field };
}
