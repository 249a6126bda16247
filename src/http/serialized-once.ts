/**
 * Bodies of values many requests share (a cached handoff record, a cached product list) are serialized
 * once, by the route's own serializer for the status, so every answer has the same bytes as one the
 * serializer would make (a strong ETag promises that) at the cost of one look-up.
 */
import type { FastifyReply } from 'fastify';

const bodies = new WeakMap<object, string>();

/**
 * Sends `value` as the route's JSON body of `status`, serialized the first time `key` is seen and reused
 * while `key` lives; `key` must be immutable and stand for `value` (the cached object it was made from).
 */
export function sendSerializedOnce(
  reply: FastifyReply,
  key: object,
  value: object,
  status = 200,
): FastifyReply {
  let body = bodies.get(key);
  if (body === undefined) {
    const serialize = reply.getSerializationFunction(String(status));
    body = serialize ? serialize(value as Record<string, unknown>) : JSON.stringify(value);
    bodies.set(key, body);
  }
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}
