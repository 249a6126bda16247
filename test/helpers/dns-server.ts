/**
 * A name server on loopback for tests: answers A and AAAA queries from a table, NXDOMAIN for a name not in
 * it, and nothing at all for a name marked silent (as name servers that drop queries do).
 */
import { createSocket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';

/** What a name answers: its addresses, or `silent`. */
export type DnsAnswer = string[] | 'silent';

/** Starts the server; `queries` counts what it was asked, by name. */
export async function startDnsServer(names: Record<string, DnsAnswer>) {
  const socket = createSocket('udp4');
  const queries = new Map<string, number>();
  socket.on('message', (query, from) => {
    let offset = 12;
    const labels: string[] = [];
    for (let length = query[offset] ?? 0; length > 0; length = query[offset] ?? 0) {
      labels.push(query.subarray(offset + 1, offset + 1 + length).toString('latin1'));
      offset += length + 1;
    }
    const name = labels.join('.').toLowerCase();
    const type = query.readUInt16BE(offset + 1);
    const question = query.subarray(12, offset + 5);
    queries.set(name, (queries.get(name) ?? 0) + 1);
    const answer = names[name];
    if (answer === 'silent') return;
    const family = type === 28 ? 6 : type === 1 ? 4 : 0;
    const records = (answer ?? [])
      .filter((a) => (isIPv6(a) ? 6 : 4) === family)
      .map((a) => {
        const data = Buffer.from(ipaddr.parse(a).toByteArray());
        const head = Buffer.alloc(12);
        head.writeUInt16BE(0xc00c, 0); // the name, as a pointer to the question's
        head.writeUInt16BE(type, 2);
        head.writeUInt16BE(1, 4);
        head.writeUInt32BE(60, 6);
        head.writeUInt16BE(data.length, 10);
        return Buffer.concat([head, data]);
      });
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(answer === undefined ? 0x8183 : 0x8180, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(records.length, 6);
    socket.send(Buffer.concat([header, question, ...records]), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    /** `127.0.0.1:port`, as WEBHOOK_DNS_SERVERS takes it. */
    address: `127.0.0.1:${socket.address().port}`,
    queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
