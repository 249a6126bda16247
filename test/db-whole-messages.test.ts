/**
 * The PostgreSQL driver's socket hands the driver whole protocol messages however the server's bytes were
 * cut into reads (src/adapters/db/whole-message-socket.ts): the driver's own parser reads the same messages
 * from any cutting as from the stream in one piece, and on a real server rows longer than a socket read
 * arrive whole.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { parse } from 'pg-protocol';
import { random } from '../scripts/analysis-set.ts';
import { driverSocket, WholeMessageSocket } from '../src/adapters/db/whole-message-socket.ts';

/** A backend message: its type, its length, its payload. */
function message(type: string, payload: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(payload.length + 4, 1);
  return Buffer.concat([header, payload]);
}

function dataRow(fields: (string | null)[]): Buffer {
  const parts = [Buffer.from([fields.length >> 8, fields.length & 0xff])];
  for (const field of fields) {
    const length = Buffer.alloc(4);
    if (field === null) {
      length.writeInt32BE(-1);
      parts.push(length);
    } else {
      const bytes = Buffer.from(field, 'utf8');
      length.writeInt32BE(bytes.length);
      parts.push(length, bytes);
    }
  }
  return message('D', Buffer.concat(parts));
}

const cstring = (text: string) => Buffer.from(`${text}\0`, 'utf8');

/** Rows short and long (one over 128 kB, past any socket read), with an end of command and of query. */
function stream(): Buffer {
  const rows = [
    dataRow(['1', null, 'short']),
    dataRow(['ç€📞'.repeat(3000)]),
    dataRow(['x'.repeat(140_000), 'y']),
    dataRow([]),
    dataRow(['last', '📞'.repeat(17)]),
  ];
  return Buffer.concat([
    ...rows,
    message('C', cstring('SELECT 5')),
    message('d', Buffer.from('copy data 123')),
    message('Z', Buffer.from('I')),
  ]);
}

type Parsed = { name: string; fields?: unknown; text?: string; chunk?: Buffer };

/** What the driver's parser reads from `chunks` given to a WholeMessageSocket, and the chunks it was given. */
function readThrough(chunks: Buffer[]): { messages: Parsed[]; given: Buffer[] } {
  const socket = new WholeMessageSocket();
  const messages: Parsed[] = [];
  const given: Buffer[] = [];
  // A copy: a row's bytes are valid until the next read, as long as the driver needs them.
  socket.on('data', (chunk: Buffer) => given.push(Buffer.from(chunk)));
  parse(socket, (m) => messages.push(m as unknown as Parsed));
  for (const chunk of chunks) socket.emit('data', chunk);
  socket.destroy();
  return { messages, given };
}

/** The chunk holds only whole messages. */
function holdsWholeMessages(chunk: Buffer): boolean {
  let offset = 0;
  while (offset < chunk.length) {
    if (chunk.length - offset < 5) return false;
    offset += 1 + chunk.readInt32BE(offset + 1);
  }
  return offset === chunk.length;
}

/** Cuts `bytes` at `cuts` (sorted offsets). */
function cutAt(bytes: Buffer, cuts: number[]): Buffer[] {
  const chunks: Buffer[] = [];
  let start = 0;
  for (const cut of [...cuts, bytes.length]) {
    if (cut > start) chunks.push(Buffer.from(bytes.subarray(start, cut)));
    start = Math.max(start, cut);
  }
  return chunks;
}

const comparable = (messages: Parsed[]) =>
  messages.map((m) => ({ name: m.name, fields: m.fields, text: m.text, chunk: m.chunk?.toString('latin1') }));

describe('the driver socket hands over whole messages', () => {
  const bytes = stream();
  const expected = comparable(readThrough([bytes]).messages);

  it('reads the stream in one piece as the messages it holds', () => {
    assert.deepEqual(
      expected.map((m) => m.name),
      ['dataRow', 'dataRow', 'dataRow', 'dataRow', 'dataRow', 'commandComplete', 'copyData', 'readyForQuery'],
    );
    assert.equal((expected[2]?.fields as string[] | undefined)?.[0]?.length, 140_000);
  });

  it('reads the same messages however the bytes are cut, and gives the driver only whole ones', () => {
    const next = random(16); // seeded, so a failing cutting can be run again
    const cuttings: number[][] = [
      // Every cut inside the first messages' headers, one byte at a time.
      Array.from({ length: 40 }, (_, i) => i + 1),
      // Reads of 64 kB, as a socket brings them.
      Array.from({ length: Math.floor(bytes.length / 65536) }, (_, i) => (i + 1) * 65536),
    ];
    for (let i = 0; i < 200; i++) {
      const count = 1 + Math.floor(next() * 12);
      cuttings.push(
        Array.from({ length: count }, () => Math.floor(next() * bytes.length)).sort((a, b) => a - b),
      );
    }
    for (const cuts of cuttings) {
      const { messages, given } = readThrough(cutAt(bytes, cuts));
      assert.deepEqual(comparable(messages), expected, `cut at ${cuts.join(', ')}`);
      assert.ok(given.every(holdsWholeMessages), `cut at ${cuts.join(', ')}`);
      assert.deepEqual(Buffer.concat(given), bytes);
    }
  });

  it('gives a message other than a row as a copy, which later reads leave as it was', () => {
    const copy = message('d', Buffer.from('kept by the driver'));
    const after = dataRow(['z'.repeat(70_000)]);
    const socket = new WholeMessageSocket();
    const given: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => given.push(chunk));
    socket.emit('data', copy.subarray(0, 3));
    socket.emit('data', Buffer.concat([copy.subarray(3), after.subarray(0, 10)]));
    socket.emit('data', after.subarray(10));
    socket.destroy();
    assert.deepEqual(given[0], copy);
    assert.deepEqual(given.at(-1), after);
  });

  it('hands a stream that is not messages to the driver as it came', () => {
    const broken = Buffer.from([0x44, 0, 0, 0, 1, 9, 9, 9]);
    for (const chunks of [[broken], [broken.subarray(0, 2), broken.subarray(2)]]) {
      const socket = new WholeMessageSocket();
      const given: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => given.push(chunk));
      for (const chunk of chunks) socket.emit('data', chunk);
      socket.destroy();
      assert.deepEqual(Buffer.concat(given), broken);
    }
  });

  it('uses a plain socket for a connection with TLS', () => {
    assert.ok(driverSocket({}) instanceof WholeMessageSocket);
    const tls = driverSocket({ ssl: { rejectUnauthorized: false } });
    assert.ok(!(tls instanceof WholeMessageSocket));
    tls.destroy();
  });
});

describe('the driver socket on PostgreSQL', { skip: !process.env.TEST_DATABASE_URL }, () => {
  it('reads rows longer than a socket read whole, among short ones', async () => {
    const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL, stream: driverSocket });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number; text: string }>(
        `select n, repeat(chr(233) || chr(128222) || 'x', n * 20000) as text from generate_series(0, 6) n`,
      );
      assert.deepEqual(
        rows.map((r) => r.text),
        [0, 1, 2, 3, 4, 5, 6].map((n) => 'é📞x'.repeat(n * 20000)),
      );
    } finally {
      await client.end();
    }
  });
});
