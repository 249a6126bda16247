/**
 * A loopback TCP proxy to a server (PostgreSQL), to stage outages: `cut` destroys every connection and
 * refuses new ones; `pause` keeps every socket open but moves no byte either way (new connections are
 * accepted and held), as a blackholed network does; `resume` lets the held bytes flow again.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

/** A proxy listening on `port` that forwards to `targetHost:targetPort`. */
export function tcpProxy(port: number, targetPort = 5432, targetHost = '127.0.0.1') {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let paused = false;
  const open = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(targetPort, targetHost);
        sockets.add(client);
        sockets.add(upstream);
        if (paused) {
          client.pause();
          upstream.pause();
        }
        client.pipe(upstream).pipe(client);
        const close = () => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
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
      if (server) server.close(() => resolve());
      else resolve();
    });
  const pause = () => {
    paused = true;
    for (const s of sockets) s.pause();
  };
  const resume = () => {
    paused = false;
    for (const s of sockets) s.resume();
  };
  return { open, cut, pause, resume };
}
