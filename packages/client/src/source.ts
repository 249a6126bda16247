/** What an upload reads from: bytes, a Blob, a stream, an async iterable, or a re-openable source. */

/** A source that can be opened again, so a failed PUT can be retried (a file, made by `fileSource`). */
export interface UploadSource {
  /** Length in bytes (sent as Content-Length). */
  size: number;
  /** A fresh stream of the whole content. */
  open(): ReadableStream<Uint8Array>;
}

/** Anything uploadRecording accepts as the recording's content. */
export type UploadBody =
  | UploadSource
  | Uint8Array
  | Blob
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array>;

/** A source ready to PUT: its size, how to get a body, and whether it can be sent twice. */
export interface PreparedBody {
  size: number;
  /** Whether the body is a stream (sent with `duplex: 'half'`) rather than bytes. */
  streamed: boolean;
  /** Whether a second PUT can be made with it. */
  reopenable: boolean;
  open(): ReadableStream<Uint8Array> | Uint8Array | Blob;
}

/** Normalizes a body; a one-shot stream or iterable needs its `size` given. */
export function prepareBody(body: UploadBody, size?: number): PreparedBody {
  if (body instanceof Uint8Array)
    return { size: body.byteLength, streamed: false, reopenable: true, open: () => body };
  if (typeof Blob !== 'undefined' && body instanceof Blob)
    return { size: body.size, streamed: false, reopenable: true, open: () => body };
  if (isSource(body)) return { size: body.size, streamed: true, reopenable: true, open: () => body.open() };
  if (size === undefined) throw new TypeError('uploadRecording: give `size` with a stream or an iterable');
  let used = false;
  const once = () => {
    if (used) throw new TypeError('a stream can be sent only once');
    used = true;
    return body instanceof ReadableStream ? body : iterableStream(body as AsyncIterable<Uint8Array>);
  };
  return { size, streamed: true, reopenable: false, open: once };
}

function isSource(body: UploadBody): body is UploadSource {
  return typeof (body as UploadSource).open === 'function' && typeof (body as UploadSource).size === 'number';
}

/** A ReadableStream that pulls from an async iterable. */
export function iterableStream(iterable: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = iterable[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await iterator.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}

/** A stream that did not hold the size it was given. */
export class StreamLengthError extends Error {
  override name = 'StreamLengthError';
}

/**
 * Wraps a stream so each chunk that passes reports the running total, and so it holds exactly `size`
 * bytes: the PUT declares that length, so a longer stream had its tail cut off by the server (a recording
 * stored truncated, and reported ready) and a shorter one left the request waiting for bytes that never
 * came. Either now fails the PUT at once, naming both lengths. When `signal` aborts, the source is cancelled
 * (a file source closes its file) and the stream returned errors.
 */
export function countingStream(
  stream: ReadableStream<Uint8Array>,
  size: number,
  onBytes: (sent: number) => void,
  signal?: AbortSignal,
): ReadableStream<Uint8Array> {
  let sent = 0;
  const mismatch = (what: string) =>
    new StreamLengthError(`the upload's stream ${what}; its size was given as ${size} bytes`);
  return stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        sent += chunk.byteLength;
        if (sent > size) throw mismatch(`holds more than ${size} bytes`);
        controller.enqueue(chunk);
        onBytes(sent);
      },
      flush() {
        if (sent < size) throw mismatch(`ended after ${sent} bytes`);
      },
    }),
    signal ? { signal } : {},
  );
}
