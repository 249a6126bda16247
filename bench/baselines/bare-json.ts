/** Baseline: a bare node:http server answering every request with one fixed JSON body (BODY). */
import { createServer } from 'node:http';

const body = Buffer.from(process.env.BODY ?? '{"ok":true}');
const server = createServer((_request, response) => {
  response.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': body.length,
  });
  response.end(body);
});
server.keepAliveTimeout = 72_000;
server.listen(Number(process.env.PORT), '127.0.0.1');
process.once('SIGTERM', () => server.close(() => process.exit(0)));
