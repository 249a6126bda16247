/**
 * Baseline: a bare node:http server that streams each PUT body to a new file in DATA_DIR. FSYNC=1 makes it
 * fsync each file before answering, as the embedded storage does (to measure what durability costs). The
 * upload scenario runs it without FSYNC=1: it skips the fsync the service pays for, so the upload ratio
 * understates the service (left so, as the target was set against this baseline).
 */
import { createWriteStream } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

const dir = process.env.DATA_DIR ?? '.';
const flush = process.env.FSYNC === '1';
let count = 0;
const server = createServer((request, response) => {
  if (request.method !== 'PUT') {
    response.writeHead(200).end();
    return;
  }
  const file = join(dir, `upload-${++count}`);
  pipeline(request, createWriteStream(file, { flush })).then(
    () => response.writeHead(200, { etag: `"${count}"` }).end(),
    () => response.writeHead(500).end(),
  );
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.once('SIGTERM', () => server.close(() => process.exit(0)));
