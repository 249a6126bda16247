/**
 * Baseline: a bare node:http server that streams one file (FILE) to every GET, with fs.createReadStream:
 * what serving a recording from disk costs without signatures, ranges or a framework.
 */
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { pipeline } from 'node:stream/promises';

const file = process.env.FILE ?? '';
const server = createServer((request, response) => {
  if (request.url !== '/recording' || !file) {
    response.writeHead(200).end();
    return;
  }
  const { size } = statSync(file);
  response.writeHead(200, { 'content-type': 'audio/wav', 'content-length': String(size) });
  pipeline(createReadStream(file, { highWaterMark: 256 * 1024 }), response).catch(() => response.destroy());
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.once('SIGTERM', () => server.close(() => process.exit(0)));
