/**
 * The PostgreSQL driver's socket, handing the driver whole protocol messages (issue 16).
 *
 * The driver's parser (pg-protocol) joins a message split across two socket reads by allocating a new buffer
 * twice the size of the last read: 128 kB for most of them, as a read brings up to 64 kB. Nearly every read
 * of a large answer ends inside a message, so a call read of a 1,000-segment transcript (185 kB from the
 * database) allocated about two such buffers, outside V8's heap; they lived until a collection found them
 * dead and left glibc's heap fragmented. Measured in the bench's call reads on PostgreSQL (four interleaved
 * pairs, with the same join made in the parser itself): peak RSS 148.5-152.0 MB against 151.1-161.4.
 *
 * This socket cuts its reads at message boundaries instead: the whole messages of a read go to the driver
 * as they are (no copy), and the start of a split message waits in one buffer kept by the connection until
 * its end arrives. A data row handed over from that buffer is read by the driver before the next read (it
 * copies every field into a string); any other message is handed over as a copy of its own, since the driver
 * keeps slices of some (COPY data, an authentication's salt).
 *
 * Only for a connection without TLS: there the server's first answer (to the SSL request) is one byte, not a
 * message, and TLS reads its socket below the 'data' events this cuts.
 */
import { Socket } from 'node:net';

/** A message's type byte and its length (an int32 that counts itself but not the type byte). */
const HEADER_BYTES = 5;
const DATA_ROW = 0x44; // 'D'
/** The kept buffer's first size; it doubles as long messages need. */
const FIRST_CAPACITY = 64 * 1024;
/** A kept buffer larger than this (a very long row) is let go once its message has been handed over. */
const KEEP_AT_MOST = 1024 * 1024;

/** Length of the message at `offset` of `bytes` (type byte included), which holds its header. */
function messageLength(bytes: Buffer, offset: number): number {
  return 1 + bytes.readInt32BE(offset + 1);
}

/** A net.Socket whose 'data' events carry only whole PostgreSQL backend messages. */
export class WholeMessageSocket extends Socket {
  #kept: Buffer | undefined;
  /** Bytes of a split message held at the start of #kept (0: none). */
  #keptLength = 0;

  override emit(event: string | symbol, ...args: unknown[]): boolean {
    const [chunk] = args;
    if (event !== 'data' || !Buffer.isBuffer(chunk)) return super.emit(event, ...args);
    let offset = this.#keptLength > 0 ? this.#finishKept(chunk) : 0;
    if (offset < 0) return true;
    let end = offset;
    while (chunk.length - end >= HEADER_BYTES) {
      const length = messageLength(chunk, end);
      // Not a message (a broken stream): the rest goes to the driver as it came, for it to fail on.
      if (length < HEADER_BYTES) end = chunk.length;
      else if (end + length > chunk.length) break;
      else end += length;
    }
    if (end > offset) {
      super.emit('data', offset === 0 && end === chunk.length ? chunk : chunk.subarray(offset, end));
      offset = end;
    }
    if (offset < chunk.length) {
      this.#append(chunk, offset, chunk.length);
      if (this.#keptLength >= HEADER_BYTES) this.#reserve(messageLength(this.#kept as Buffer, 0));
    }
    return true;
  }

  /**
   * Completes the split message from the start of `chunk` and hands it over; returns where the rest of
   * `chunk` begins, or -1 when all of it went into the message and the message is still not whole.
   */
  #finishKept(chunk: Buffer): number {
    let offset = 0;
    if (this.#keptLength < HEADER_BYTES) {
      offset = Math.min(HEADER_BYTES - this.#keptLength, chunk.length);
      this.#append(chunk, 0, offset);
      if (this.#keptLength < HEADER_BYTES) return -1;
    }
    const length = messageLength(this.#kept as Buffer, 0);
    if (length < HEADER_BYTES) {
      const raw = Buffer.concat([
        (this.#kept as Buffer).subarray(0, this.#keptLength),
        chunk.subarray(offset),
      ]);
      this.#keptLength = 0;
      super.emit('data', raw);
      return -1;
    }
    this.#reserve(length);
    const take = Math.min(length - this.#keptLength, chunk.length - offset);
    this.#append(chunk, offset, offset + take);
    offset += take;
    if (this.#keptLength < length) return -1;
    const kept = this.#kept as Buffer;
    const whole = kept.subarray(0, length);
    this.#keptLength = 0;
    if (kept.length > KEEP_AT_MOST) this.#kept = undefined;
    super.emit('data', whole[0] === DATA_ROW ? whole : Buffer.from(whole));
    return offset;
  }

  /** Appends `chunk[start, end)` to the kept bytes. */
  #append(chunk: Buffer, start: number, end: number): void {
    const length = this.#keptLength + end - start;
    this.#reserve(length);
    chunk.copy(this.#kept as Buffer, this.#keptLength, start, end);
    this.#keptLength = length;
  }

  /** Makes the kept buffer hold at least `size` bytes, keeping what it holds. */
  #reserve(size: number): void {
    if (this.#kept && this.#kept.length >= size) return;
    let capacity = this.#kept?.length ?? FIRST_CAPACITY;
    while (capacity < size) capacity *= 2;
    const grown = Buffer.allocUnsafeSlow(capacity);
    this.#kept?.copy(grown, 0, 0, this.#keptLength);
    this.#kept = grown;
  }
}

/**
 * The `stream` of a pg connection: a WholeMessageSocket, or a plain socket when the connection uses TLS
 * (the driver passes its connection's settings).
 */
export function driverSocket(settings?: { ssl?: unknown }): Socket {
  return settings?.ssl ? new Socket() : new WholeMessageSocket();
}

/**
 * The socket a pg client reads through (pg keeps it as `connection.stream`, outside its types), to destroy a
 * connection whose server has gone silent: `end()` would wait on it for as long as the system keeps it.
 */
export function socketOf(client: object): Pick<Socket, 'destroy'> | undefined {
  return (client as { connection?: { stream?: Socket } }).connection?.stream;
}
