/**
 * Large call answers are written into buffers used again once an answer has been handed to the kernel
 * (src/http/answer-buffers.ts): over real sockets, with clients that stop reading part-way and clients that
 * go away, every answer is its own call's, whole. On loopback the kernel takes an answer of 1 MiB at once
 * (3.9 MB from a client that reads nothing, measured), so when a buffer is given back is also checked on
 * the answer's own events.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply } from 'fastify';
import { answerBuffer } from '../src/http/answer-buffers.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import type { Harness } from './helpers/harness.ts';
import { startListening } from './helpers/listening.ts';
import { makeCall, type ReadKeys, readKeys } from './helpers/reads.ts';

/** A transcript of `segments` segments: an answer of about 265 bytes a segment (1,000 → 265 kB, 2,000 → 530 kB). */
function transcript(mark: string, segments: number) {
  return Array.from({ length: segments }, (_, i) => ({
    role: i % 2 === 0 ? 'agent' : 'customer',
    text: `${mark} ${i}: ${mark.repeat(200)}`,
    start: i,
    stop: i + 0.5,
  }));
}

/** GET `path`; the client reads nothing for `pauseMs` after the headers, or with `abort` goes away at them. */
function read(
  baseUrl: string,
  path: string,
  key: string,
  pauseMs: number,
  abort = false,
): Promise<{ status: number; body: string } | 'aborted'> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } }, (res) => {
      if (abort) {
        req.destroy();
        resolve('aborted');
        return;
      }
      const chunks: Buffer[] = [];
      res.pause();
      setTimeout(() => {
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.resume();
      }, pauseMs);
    });
    req.on('error', (error) => (abort ? resolve('aborted') : reject(error)));
    req.end();
  });
}

describe('call answers in reused buffers', () => {
  let h: Harness;
  let baseUrl: string;
  let c: TestCompany;
  let keys: ReadKeys;
  before(async () => {
    ({ h, baseUrl } = await startListening('pglite'));
    c = await h.company();
    keys = await readKeys(c);
  });
  after(() => h.close());

  it('answers each client its own call whole, while others stop reading or go away', async () => {
    const calls = [
      { mark: 'a', transcript: transcript('a', 2000) },
      { mark: 'b', transcript: transcript('b', 1900) },
      { mark: 'c', transcript: transcript('c', 1000) },
    ];
    const ids: string[] = [];
    for (const call of calls) {
      ids.push(
        (await makeCall(h, c, keys, { conversationId: `reuse-${call.mark}`, transcript: call.transcript }))
          .id,
      );
    }
    for (let round = 0; round < 3; round++) {
      const reads = Array.from({ length: 12 }, (_, i) => {
        const which = i % calls.length;
        const pause = i % 4 === 0 ? 300 : i % 4 === 1 ? 50 : 0;
        return read(baseUrl, `/api/v1/calls/${ids[which]}`, keys.admin, pause, i % 6 === 5).then((got) => ({
          which,
          got,
        }));
      });
      for (const { which, got } of await Promise.all(reads)) {
        if (got === 'aborted') continue;
        assert.equal(got.status, 200);
        const answer = JSON.parse(got.body) as { id: string; transcript: unknown[] };
        assert.equal(answer.id, ids[which]);
        assert.deepEqual(answer.transcript, calls[which]?.transcript);
      }
      await sleep(10);
    }
  });
});

describe('answer buffers', () => {
  /** The part of a reply answerBuffer uses: its node:http answer's events. */
  function reply(): { reply: FastifyReply; raw: EventEmitter } {
    const raw = new EventEmitter();
    return { reply: { raw } as unknown as FastifyReply, raw };
  }
  const sameMemory = (a: Buffer, b: Buffer) => a.buffer === b.buffer && a.byteOffset === b.byteOffset;

  it('gives a buffer to another answer only after its own has finished', () => {
    const first = reply();
    const a = answerBuffer(first.reply, 300_000);
    assert.equal(a.length, 300_000);
    const b = answerBuffer(reply().reply, 300_000);
    assert.ok(!sameMemory(a, b), 'an unfinished answer keeps its buffer');
    first.raw.emit('finish');
    const c = answerBuffer(reply().reply, 290_000);
    assert.equal(c.length, 290_000);
    assert.ok(sameMemory(a, c), 'a finished answer gives its buffer back');
  });

  it('leaves the buffer of an answer whose client went away to the garbage collector', () => {
    const gone = reply();
    const a = answerBuffer(gone.reply, 200_000);
    gone.raw.emit('close');
    const b = answerBuffer(reply().reply, 200_000);
    assert.ok(!sameMemory(a, b));
  });

  it('gives small and very large answers buffers of their own', () => {
    for (const size of [1_000, 2 * 1024 * 1024]) {
      const one = reply();
      const a = answerBuffer(one.reply, size);
      assert.equal(a.length, size);
      one.raw.emit('finish');
      assert.ok(!sameMemory(a, answerBuffer(reply().reply, size)));
    }
  });
});
