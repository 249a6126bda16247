/**
 * A floor under the rate of request bodies: a client that sends its body slower than MIN_BODY_RATE bytes
 * per second, measured over each MIN_BODY_RATE_WINDOW, is dropped (REQUEST_TIMEOUT alone let a trickle
 * hold a socket for 15 minutes). Measured on the socket's byte count, so the body stream itself is not
 * touched; the first window of an upload that waits for `100 Continue` is not measured.
 */
import type { IncomingMessage, Server } from '../adapters/http/node-http.ts';

/** The floor: `bytesPerSecond` 0 turns it off. */
export interface BodyRateFloor {
  bytesPerSecond: number;
  windowMs: number;
}

function hasBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
}

/** Watches every request with a body on `server`, and destroys the socket of one that stays too slow. */
export function enforceBodyRate(server: Server, floor: BodyRateFloor): void {
  if (floor.bytesPerSecond === 0) return;
  const minBytes = (floor.bytesPerSecond * floor.windowMs) / 1000;
  server.on('request', (request: IncomingMessage) => {
    if (!hasBody(request)) return;
    const socket = request.socket;
    let last = socket.bytesRead;
    // An `Expect: 100-continue` client sends nothing until told: its first window is not measured.
    let grace = /100-continue/i.test(String(request.headers.expect ?? ''));
    const timer = setInterval(() => {
      if (request.complete || socket.destroyed) {
        clearInterval(timer);
        return;
      }
      const read = socket.bytesRead;
      if (grace) {
        grace = false;
      } else if (read - last < minBytes) {
        clearInterval(timer);
        socket.destroy();
        return;
      }
      last = read;
    }, floor.windowMs);
    timer.unref();
    request.once('end', () => clearInterval(timer));
    request.once('close', () => clearInterval(timer));
  });
}
