/**
 * A loopback TCP proxy to a server (PostgreSQL), to stage outages: `cut` destroys every connection and
 * refuses new ones; `pause` keeps every socket open but moves no byte either way (new connections are
 * accepted and held), as a blackholed network does; `resume` lets the held bytes flow again; `silence`
 * blackholes one connection for good (the one whose socket to the server has the given local port), as a
 * firewall that drops an idle connection does.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

/** A proxy listening on `port` that forwards to `targetHost:targetPort`. */
export function tcpProxy(port: number, targetPort = 5432, targetHost = '127.0.0.1') {
  const sockets = new Set<Socket>();
  /** Flushes of the bytes each direction held during a pause. */
  const flushes = new Set<() => void>();
  let server: Server | undefined;
  let paused = false;
  // Bytes are forwarded by hand, not with pipe(): pipe() resumes a paused source when its destination
  // drains, so a pause made with socket.pause() can leak bytes and the blackhole is not one.
  const silenced = new Set<Socket>();
  const forward = (from: Socket, to: Socket, upstream: Socket) => {
    const held: Buffer[] = [];
    from.on('data', (chunk: Buffer) => {
      if (silenced.has(upstream)) return;
      if (paused) held.push(chunk);
      else to.write(chunk);
    });
    const flush = () => {
      while (held.length > 0 && !to.destroyed) to.write(held.shift() as Buffer);
    };
    flushes.add(flush);
    from.on('close', () => flushes.delete(flush));
  };
  const open = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(targetPort, targetHost);
        sockets.add(client);
        sockets.add(upstream);
        forward(client, upstream, upstream);
        forward(upstream, client, upstream);
        const close = () => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
          silenced.delete(upstream);
        };
        client.on('error', close).on('close', close);
        upstream.on('error', close).on('close', close);
      }).listen(port, '127.0.0.1', () => resolve());
    });
  const cut = () =>
    new Promise<void>((resolve) => {
      paused = false;
      for (const s of sockets) s.destroy();
      sockets.clear();
      flushes.clear();
      if (server) server.close(() => resolve());
      else resolve();
    });
  const pause = () => {
    paused = true;
  };
  const resume = () => {
    paused = false;
    for (const flush of flushes) flush();
  };
  /** Blackholes the connection whose socket to the server has local port `port`; false when none has. */
  const silence = (port: number) => {
    for (const s of sockets) {
      if (s.remotePort === targetPort && s.localPort === port) {
        silenced.add(s);
        return true;
      }
    }
    return false;
  };
  return { open, cut, pause, resume, silence };
}
