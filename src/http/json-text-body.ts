/**
 * Answers whose fields hold stored JSON text (`JsonText`, domain/json-text.ts): the rest of the value is
 * serialized by the route's own serializer for the status, so it is shaped and checked as any answer is,
 * with each such field as null; the field's text is then written in place of that null.
 */
import type { FastifyReply } from 'fastify';
import type { JsonText } from '../domain/json-text.ts';

type WithJsonText<T, K extends keyof T> = Omit<T, K> & { [P in K]: JsonText<unknown> | null };

/**
 * Sends `value` as the route's JSON body of `status`, the JSON text of `fields` written as it is. The
 * fields must come before every free-form object of the schema (metadata may hold a key of the same name:
 * the first `,"field":null` must be theirs).
 */
export function sendWithJsonText<T, K extends keyof T & string>(
  reply: FastifyReply,
  value: WithJsonText<T, K>,
  fields: readonly K[],
  status = 200,
): FastifyReply {
  const serialize = reply.getSerializationFunction(String(status));
  if (!serialize) throw new Error(`the route has no schema for status ${status}`);
  const nulled: Record<string, unknown> = { ...value };
  for (const field of fields) nulled[field] = null;
  let body = serialize(nulled);
  for (const field of fields) {
    const text = (value as Record<string, JsonText<unknown> | null>)[field];
    if (!text) continue;
    const placeholder = `,"${field}":null`;
    const at = body.indexOf(placeholder);
    if (at < 0) throw new Error(`the serializer wrote no ${field}`);
    body = `${body.slice(0, at)},"${field}":${text.json}${body.slice(at + placeholder.length)}`;
  }
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}
