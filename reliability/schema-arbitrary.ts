/** A small JSON-schema → fast-check arbitrary generator, for the OpenAPI document's request schemas. */
import fc from 'fast-check';

/** A JSON schema as the OpenAPI document holds it. */
export type JsonSchema = Record<string, unknown>;

/** Values for field names that should often be real (so valid requests reach the domain). */
export type Hints = Record<string, unknown[]>;

const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  '\uFEFF',
  '\uD800',
  '😀'.repeat(50),
  'a'.repeat(70_000),
  'Ǆ\u0301\u202E',
  '../../etc/passwd',
  '%00',
  'null',
  '1e309',
];
const ODD_NUMBERS = [0, -0, -1, 1.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 2 ** 64, 1e-320];

/** Any JSON value, odd ones included. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom<unknown>(...ODD_STRINGS, ...ODD_NUMBERS, null, true, [], {}),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

function deref(schema: JsonSchema, root: JsonSchema): JsonSchema {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  let node: unknown = root;
  for (const part of ref.replace(/^#\//, '').split('/')) node = (node as Record<string, unknown>)[part];
  return deref(node as JsonSchema, root);
}

/** A valid value of `schema` (best effort: formats and patterns are approximated). */
export function arbitraryOf(
  schema: JsonSchema,
  root: JsonSchema,
  hints: Hints,
  depth = 0,
  name = '',
): fc.Arbitrary<unknown> {
  const s = deref(schema, root);
  const hinted = hints[name];
  const base = valid(s, root, hints, depth);
  return hinted
    ? fc.oneof({ arbitrary: fc.constantFrom(...hinted), weight: 3 }, { arbitrary: base, weight: 1 })
    : base;
}

function valid(s: JsonSchema, root: JsonSchema, hints: Hints, depth: number): fc.Arbitrary<unknown> {
  const alts = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  if (alts) return fc.oneof(...alts.map((a) => arbitraryOf(a, root, hints, depth + 1)));
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  if ('const' in s) return fc.constant(s.const);
  switch (s.type) {
    case 'string': {
      if (s.format === 'uuid') return fc.uuid();
      if (s.format === 'email') return fc.emailAddress();
      if (s.format === 'date-time') return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
      const min = typeof s.minLength === 'number' ? s.minLength : 0;
      const max = typeof s.maxLength === 'number' ? Math.min(s.maxLength, min + 40) : min + 40;
      return fc.string({ minLength: min, maxLength: max });
    }
    case 'integer':
      return fc.integer({
        min: typeof s.minimum === 'number' ? s.minimum : -1_000_000,
        max: typeof s.maximum === 'number' ? Math.min(s.maximum, 2 ** 31) : 1_000_000,
      });
    case 'number':
      return fc.double({
        noNaN: true,
        noDefaultInfinity: true,
        min: typeof s.minimum === 'number' ? s.minimum : -1e12,
        max: typeof s.maximum === 'number' ? s.maximum : 1e12,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      if (depth > 5) return fc.constant([]);
      const min = typeof s.minItems === 'number' ? s.minItems : 0;
      const max = typeof s.maxItems === 'number' ? Math.min(s.maxItems, min + 4) : min + 4;
      const items = s.items ? arbitraryOf(s.items as JsonSchema, root, hints, depth + 1) : anyJson;
      return fc.array(items, { minLength: min, maxLength: max });
    }
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((s.required ?? []) as string[]);
      if (Object.keys(props).length === 0)
        return fc.dictionary(fc.string({ maxLength: 10 }), anyJson, { maxKeys: 4 });
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) record[k] = arbitraryOf(v, root, hints, depth + 1, k);
      return fc.record(record, { requiredKeys: [...required].filter((k) => k in props) });
    }
    default:
      return anyJson;
  }
}

/** A mutation of a valid value: dropped or added fields, wrong types, odd strings and numbers, deep nesting. */
export function mutate(value: unknown): fc.Arbitrary<unknown> {
  const deep = (n: number) => {
    let v: unknown = 1;
    for (let i = 0; i < n; i++) v = { a: [v] };
    return v;
  };
  const swaps: fc.Arbitrary<unknown>[] = [anyJson, fc.constant(deep(200)), fc.constant(deep(2000))];
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return fc.oneof(...swaps, fc.constant([value]), fc.constant({ value }));
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  const ops: fc.Arbitrary<unknown>[] = [
    fc.tuple(fc.string({ maxLength: 20 }), anyJson).map(([k, v]) => ({ ...obj, [k]: v })),
    fc.constant({ ...obj, __proto__: { polluted: true }, constructor: { prototype: { x: 1 } } }),
    ...swaps,
  ];
  if (keys.length > 0) {
    const key = fc.constantFrom(...keys);
    ops.push(key.map((k) => Object.fromEntries(Object.entries(obj).filter(([x]) => x !== k))));
    ops.push(fc.tuple(key, anyJson).map(([k, v]) => ({ ...obj, [k]: v })));
    ops.push(
      fc
        .tuple(key, fc.constantFrom<unknown>(...ODD_STRINGS, ...ODD_NUMBERS))
        .map(([k, v]) => ({ ...obj, [k]: v })),
    );
  }
  return fc.oneof(...ops);
}
