/**
 * MD5 (the ETag of a single-part upload, as S3 gives it) computed on a worker thread, so that hashing an
 * upload does not hold the event loop. Chunks are copied to the worker, or moved there without a copy when
 * the caller hands them over (then it must not use them again: they are left empty). One worker serves the process; it starts
 * with the first upload, keeps the process alive only while a hash is open, and a new one replaces it if it
 * dies (the hashes open then fail).
 */
import { isMarkedAsUntransferable, Worker } from 'node:worker_threads';

/** What the main thread asks of the worker. */
export type Md5Request =
  | { id: number; op: 'update'; chunks: Uint8Array[] }
  | { id: number; op: 'digest' }
  | { id: number; op: 'discard' };

/** What the worker answers: bytes hashed by an update, or the digest. */
export type Md5Reply = { id: number; hashed: number } | { id: number; md5: string };

/** Bytes handed to the worker and not hashed yet above which `update` makes its caller wait. */
const MAX_IN_FLIGHT = 8 * 1024 * 1024;

interface Open {
  inFlight: number;
  wake: (() => void) | undefined;
  digest: { resolve(md5: string): void; reject(error: Error): void } | undefined;
  fail: Error | undefined;
}

let worker: Worker | undefined;
const open = new Map<number, Open>();
let nextId = 1;

function failAll(error: Error): void {
  worker = undefined;
  for (const [id, state] of open) {
    state.fail = error;
    state.wake?.();
    state.digest?.reject(error);
    open.delete(id);
  }
}

function theWorker(): Worker {
  if (worker) return worker;
  const started = new Worker(new URL('./md5-worker.ts', import.meta.url), {
    resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 4 },
  });
  started.unref();
  started.on('message', (reply: Md5Reply) => {
    const state = open.get(reply.id);
    if (!state) return;
    if ('md5' in reply) {
      open.delete(reply.id);
      if (open.size === 0) started.unref();
      state.digest?.resolve(reply.md5);
      return;
    }
    state.inFlight -= reply.hashed;
    if (state.inFlight <= MAX_IN_FLIGHT) {
      const wake = state.wake;
      state.wake = undefined;
      wake?.();
    }
  });
  started.on('error', (error) => {
    if (worker === started) failAll(error);
  });
  started.on('exit', (code) => {
    if (worker === started) failAll(new Error(`the MD5 worker exited with code ${code}`));
  });
  worker = started;
  return started;
}

/** A chunk the worker can take without a copy: it alone views its whole, transferable buffer. */
function ownsItsBuffer(chunk: Uint8Array): boolean {
  const { buffer } = chunk;
  return (
    buffer instanceof ArrayBuffer &&
    chunk.byteOffset === 0 &&
    chunk.byteLength === buffer.byteLength &&
    !isMarkedAsUntransferable(buffer)
  );
}

/** One MD5 being computed on the worker. */
export class OffloadedMd5 {
  readonly #id = nextId++;
  readonly #state: Open = { inFlight: 0, wake: undefined, digest: undefined, fail: undefined };
  readonly #worker: Worker;
  #done = false;

  constructor() {
    this.#worker = theWorker();
    if (open.size === 0) this.#worker.ref();
    open.set(this.#id, this.#state);
  }

  /**
   * Adds `chunks` (in order) to the hash. With `handOver`, the chunks that own their whole memory are moved
   * to the worker (and left empty here); the others are copied. Resolves at once, or when the worker has
   * caught up enough.
   */
  update(chunks: Uint8Array[], handOver: boolean): Promise<void> | undefined {
    if (this.#state.fail) return Promise.reject(this.#state.fail);
    // A write that ends after its upload was refused: the worker has dropped that hash (or is about to).
    if (this.#done) return undefined;
    const moved: Uint8Array[] = [];
    let bytes = 0;
    for (const chunk of chunks) {
      bytes += chunk.byteLength;
      moved.push(handOver && ownsItsBuffer(chunk) ? chunk : new Uint8Array(chunk));
    }
    this.#state.inFlight += bytes;
    this.#worker.postMessage(
      { id: this.#id, op: 'update', chunks: moved } satisfies Md5Request,
      moved.map((chunk) => chunk.buffer as ArrayBuffer),
    );
    if (this.#state.inFlight <= MAX_IN_FLIGHT) return undefined;
    return new Promise<void>((resolve, reject) => {
      this.#state.wake = () => (this.#state.fail ? reject(this.#state.fail) : resolve());
    });
  }

  /** The hex digest of every byte added; the hash is closed after it. */
  digest(): Promise<string> {
    if (this.#state.fail) return Promise.reject(this.#state.fail);
    this.#done = true;
    return new Promise<string>((resolve, reject) => {
      this.#state.digest = { resolve, reject };
      this.#worker.postMessage({ id: this.#id, op: 'digest' } satisfies Md5Request);
    });
  }

  /** Drops the hash (a refused or failed upload). */
  discard(): void {
    if (this.#done) return;
    this.#done = true;
    if (!open.delete(this.#id)) return;
    if (open.size === 0) this.#worker.unref();
    this.#worker.postMessage({ id: this.#id, op: 'discard' } satisfies Md5Request);
  }
}
