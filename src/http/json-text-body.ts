/**
 * Answers whose fields hold stored JSON text (`JsonText`, domain/json-text.ts): the rest of the value is
 * serialized by the route's own serializer for the status, so it is shaped and checked as any answer is,
 * with each such field as null; the field's text is then written in place of that null.
 *
 * The body is written as UTF-8 into one buffer, piece by piece. Joining the pieces into one string would
 * make a string of the whole answer, which for a long transcript is over V8's large-object size (128 kB):
 * V8 maps fresh pages for each such string and unmaps them when it dies, measured at 470-500 µs for a
 * 140 kB string on this project's VMs against 6-10 µs for 120 kB; the socket would then encode it again.
 */
import type { FastifyReply } from 'fastify';
import type { JsonText } from '../domain/json-text.ts';
import { answerBuffer } from './answer-buffers.ts';

type WithJsonText<T, K extends keyof T> = Omit<T, K> & { [P in K]: JsonText<unknown> | null };

/** What the route's serializer writes for a null field: null, or {} where the schema's object is not nullable. */
const NULL_AS = ['null', '{}'];

/**
 * Sends `value` as the route's JSON body of `status`, the JSON text of `fields` (in the order the schema
 * writes them) written as it is. Every free-form object of the answer must be one of `fields`: the rest,
 * serialized by the schema, then holds no member name but the schema's, and the first `,"field":` of the
 * body is the field's (a string's quotes are escaped).
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
  const body = serialize(nulled);
  const pieces: string[] = [];
  let from = 0;
  for (const field of fields) {
    const text = (value as Record<string, JsonText<unknown> | null>)[field];
    if (!text) continue;
    const name = `,"${field}":`;
    const at = body.indexOf(name, from);
    if (at < 0) throw new Error(`the serializer wrote no ${field}`);
    const written = NULL_AS.find((shape) => body.startsWith(shape, at + name.length));
    if (!written) throw new Error(`the serializer wrote ${field} as neither null nor {}`);
    pieces.push(body.slice(from, at + name.length), ...text.parts);
    from = at + name.length + written.length;
  }
  pieces.push(body.slice(from));
  let size = 0;
  for (const piece of pieces) size += Buffer.byteLength(piece);
  const out = answerBuffer(reply, size);
  let written = 0;
  for (const piece of pieces) written += out.write(piece, written);
  return reply.code(status).type('application/json; charset=utf-8').send(out);
}
