/**
 * Buffers for large answers (64 kB to 1 MiB: a call with a long transcript), used again once an answer
 * has been handed to the kernel.
 *
 * A Buffer's memory is malloc'd outside V8's heap and freed only when V8 collects the Buffer object. An
 * answer lives as long as its request (15 ms at the bench's ten connections), long enough for its object to
 * be promoted to the old generation, which V8 collects only when that generation has grown by a fifth
 * (`--heap-growing-percent`): the dead answers' memory piled up in glibc's heap until then. Measured in the
 * bench's call reads (1,000-segment transcripts, 185 kB answers), fifteen interleaved runs each: peak RSS
 * 147.5-176.1 MB (median 158.8) with a new Buffer per answer, 147.7-160.5 (median 152.0) with these, at the
 * same requests per second.
 */
import type { FastifyReply } from 'fastify';

const MIN = 64 * 1024;
const MAX = 1024 * 1024;
/** What the free buffers may hold together; an answer past it gets a buffer of its own. */
const MAX_FREE_BYTES = 4 * 1024 * 1024;

/** Free buffers by capacity (a power of two from MIN to MAX). */
const free = new Map<number, Buffer[]>();
let freeBytes = 0;

function capacityFor(size: number): number {
  let capacity = MIN;
  while (capacity < size) capacity *= 2;
  return capacity;
}

/**
 * A buffer of at least `size` bytes for the answer of `reply`, given back for another answer when the
 * answer has been handed to the kernel ('finish'); an answer that did not finish (its client went away)
 * leaves its buffer to the garbage collector, as the socket may still hold it.
 */
export function answerBuffer(reply: FastifyReply, size: number): Buffer {
  if (size < MIN || size > MAX) return Buffer.allocUnsafe(size);
  const capacity = capacityFor(size);
  const reused = free.get(capacity)?.pop();
  if (reused) freeBytes -= capacity;
  const store = reused ?? Buffer.allocUnsafeSlow(capacity);
  reply.raw.once('finish', () => {
    if (freeBytes + capacity > MAX_FREE_BYTES) return;
    const list = free.get(capacity) ?? [];
    list.push(store);
    free.set(capacity, list);
    freeBytes += capacity;
  });
  return store.subarray(0, size);
}
