/**
 * The minimal insert route of the create baselines: Fastify parses the JSON and one INSERT stores it as one
 * row; the answer has the shape of call/create's. Its two entry points pick the database.
 */
import Fastify, { type FastifyInstance } from 'fastify';

/** The table both baselines insert into. */
export const CREATE_TABLE =
  'create table if not exists calls (id bigserial primary key, body jsonb not null)';
/** The one statement per request. */
export const INSERT = 'insert into calls (body) values ($1)';

/** Serves POST /api/v1/call/create on PORT, calling `insert` with the body as JSON text. */
export async function serveInsertRoute(insert: (json: string) => Promise<void>): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  app.post('/api/v1/call/create', async (request) => {
    const body = request.body as { conversation_id?: string };
    await insert(JSON.stringify(body));
    return { success: true, conversation_id: body.conversation_id };
  });
  await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
  return app;
}
