/**
 * The `openai` engine against local servers of the OpenAI transcription API that answer as real ones do when
 * things go wrong (audit findings 6, 9 and 15): a 413 for a body over the hosted API's limit, 429 and 503
 * with Retry-After, a quota 429, answers with times as strings, segments past the audio's end, Whisper's
 * hallucinations in silence (high `no_speech_prob`), and answers that are not transcripts.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TranscriptionRetryLaterError } from '../src/adapters/transcribe/errors.ts';
import { createOpenAiEngine, type OpenAiOptions, retryAfterMs } from '../src/adapters/transcribe/openai.ts';
import { wavHeader } from '../src/adapters/transcribe/wav.ts';
import {
  type ChannelAudio,
  type TranscribedSegment,
  TranscriptionError,
} from '../src/domain/transcription/engine.ts';
import { loudRuns } from './helpers/openai-transcription-server.ts';

const RATE = 16_000;
/** Where the channel is loud (tone bursts), in seconds: what the fake servers "recognise". */
const BURSTS = [
  { start: 1, stop: 2 },
  { start: 5, stop: 6 },
  { start: 9, stop: 10 },
  { start: 13, stop: 14 },
];
const DURATION_S = 16;
const CHANNEL_BYTES = 44 + DURATION_S * RATE * 2;

let dir: string;
let audio: ChannelAudio;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cqs-openai-answers-'));
  const pcm = new Int16Array(DURATION_S * RATE);
  for (const b of BURSTS) {
    for (let i = b.start * RATE; i < b.stop * RATE; i++) pcm[i] = Math.round(8000 * Math.sin(i / 5));
  }
  const path = join(dir, 'channel.wav');
  await writeFile(path, Buffer.concat([wavHeader(pcm.length, 1, RATE), Buffer.from(pcm.buffer)]));
  audio = { wavPath: path, durationS: DURATION_S, speech: BURSTS.map((b) => ({ ...b })) };
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** One request as a fake server got it. */
interface Got {
  at: number;
  bodyBytes: number;
  wav: Buffer;
}

interface Answer {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

/** A segment of verbose_json as the hosted API writes it. */
const segment = (start: unknown, end: unknown, text: unknown, extra: Record<string, unknown> = {}) => ({
  id: 0,
  seek: 0,
  start,
  end,
  text,
  tokens: [50364],
  temperature: 0,
  avg_logprob: -0.2,
  compression_ratio: 1.2,
  no_speech_prob: 0.01,
  ...extra,
});

/** verbose_json with a segment at each loud run of the piece (times relative to the piece). */
function recognise(wav: Buffer, edit: (s: ReturnType<typeof segment>[]) => unknown[] = (s) => s): Answer {
  const runs = loudRuns(wav);
  const segments = runs.map((r, n) => segment(r.start, r.end, ` burst ${n}`));
  return {
    status: 200,
    body: {
      task: 'transcribe',
      language: 'english',
      duration: (wav.length - 44) / 2 / RATE,
      segments: edit(segments),
    },
  };
}

/** A local server of the API that answers each request (its 0-based number `n`) as `answer` says. */
async function startServer(answer: (got: Got, n: number) => Answer) {
  const got: Got[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const file = await new Response(raw, { headers: { 'content-type': req.headers['content-type'] ?? '' } })
      .formData()
      .then((form) => form.get('file'))
      .catch(() => null);
    const request = {
      at: Date.now(),
      bodyBytes: raw.length,
      wav: file instanceof Blob ? Buffer.from(await file.arrayBuffer()) : Buffer.alloc(0),
    };
    got.push(request);
    const a: Answer =
      file instanceof Blob
        ? answer(request, got.length - 1)
        : { status: 400, body: { error: { message: 'no file in the multipart body' } } };
    res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers });
    res.end(typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, got, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const engineFor = (url: string, options: Partial<OpenAiOptions> = {}) =>
  createOpenAiEngine({
    url,
    apiKey: undefined,
    model: 'whisper-1',
    concurrency: 1,
    timeoutMs: 10_000,
    maxBytes: 25 * 1024 * 1024,
    ...options,
  });

/** Each burst has one segment within 50 ms of it, in order, with numeric times. */
function assertBursts(segments: TranscribedSegment[]) {
  assert.equal(segments.length, BURSTS.length, JSON.stringify(segments));
  BURSTS.forEach((b, i) => {
    const s = segments[i] as TranscribedSegment;
    assert.equal(typeof s.start, 'number', JSON.stringify(s));
    assert.equal(typeof s.stop, 'number', JSON.stringify(s));
    assert.ok(Math.abs(s.start - b.start) < 0.05 && Math.abs(s.stop - b.stop) < 0.05, JSON.stringify(s));
  });
}

/** Rejects with a TranscriptionError; returns it. */
async function failure(promise: Promise<unknown>): Promise<TranscriptionError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof TranscriptionError, `not a TranscriptionError: ${String(error)}`);
    return error;
  }
  assert.fail('resolved');
}

describe('openai engine: requests too large for the server (413)', () => {
  it('halves a piece the server refuses, sends the halves, and cuts later pieces to that size', async () => {
    // TRANSCRIBER_MAX_BYTES equal to the server's limit on the whole body, as the old default was: every
    // full-size piece's multipart body is a few hundred bytes over it. Speech without pauses, so pieces are
    // full size (cut at the limit, 8 s).
    const limit = 44 + 8 * RATE * 2;
    const server = await startServer((got) =>
      got.bodyBytes > limit
        ? {
            status: 413,
            body: {
              error: {
                message: `Maximum content size limit (${limit}) exceeded (${got.bodyBytes} bytes read)`,
              },
            },
          }
        : recognise(got.wav),
    );
    try {
      const engine = engineFor(server.url, { maxBytes: limit });
      const segments = await engine.transcribe({ ...audio, speech: [{ start: 0.5, stop: 15.5 }] });
      assertBursts(segments);
      const refused = server.got.filter((g) => g.bodyBytes > limit);
      // One request at a time: the first piece is refused, halved, and the second is cut before it is sent.
      assert.equal(refused.length, 1, `${refused.length} refused`);
      assert.equal(server.got.length, 5);
      // The whole channel reached the server, once: the accepted pieces add up to it.
      const accepted = server.got.filter((g) => g.bodyBytes <= limit);
      assert.equal(
        accepted.reduce((sum, g) => sum + g.wav.length - 44, 0),
        CHANNEL_BYTES - 44,
      );
    } finally {
      await server.close();
    }
  });

  it('cuts a refused piece in the pauses between speech', async () => {
    const limit = 300_000; // the channel (512 kB) in one piece is refused; its halves (≤ 8 s) are not
    const server = await startServer((got) =>
      got.bodyBytes > limit ? { status: 413, body: { error: { message: 'too large' } } } : recognise(got.wav),
    );
    try {
      const segments = await engineFor(server.url, { maxBytes: 1_000_000 }).transcribe(audio);
      assertBursts(segments);
      for (const g of server.got.slice(1)) {
        const runs = loudRuns(g.wav);
        const seconds = (g.wav.length - 44) / 2 / RATE;
        assert.ok((runs[0]?.start ?? 0) > 0.05 && seconds - (runs.at(-1)?.end ?? 0) > 0.05, 'cut in a pause');
      }
    } finally {
      await server.close();
    }
  });

  it('gives up for good when even a piece at the floor is refused', async () => {
    const server = await startServer(() => ({ status: 413, body: { error: { message: 'too large' } } }));
    try {
      const error = await failure(engineFor(server.url).transcribe(audio));
      assert.equal(error.transient, false);
      assert.match(error.message, /413/);
      // 512 kB halved down to the 64 KiB floor: a handful of requests, not an endless loop.
      assert.ok(server.got.length <= 16, `${server.got.length} requests`);
    } finally {
      await server.close();
    }
  });
});

describe('openai engine: rate limits', () => {
  for (const status of [429, 503]) {
    it(`gives the job back until a long Retry-After of a ${status} has passed, with the time`, async () => {
      const server = await startServer(() => ({
        status,
        headers: { 'retry-after': '3600' },
        body: { error: { message: 'Rate limit reached for requests', type: 'requests' } },
      }));
      try {
        const engine = engineFor(server.url);
        const before = Date.now();
        const error = await failure(engine.transcribe(audio));
        assert.ok(error instanceof TranscriptionRetryLaterError, `${error.name}: ${error.message}`);
        assert.equal(error.name, 'TranscriptionRetryLaterError');
        assert.equal(error.transient, true);
        assert.match(error.message, new RegExp(`answered ${status}.*retry in 3600 s`));
        assert.ok(
          error.retryAfterMs > 3_590_000 && error.retryAfterMs <= 3_600_000,
          String(error.retryAfterMs),
        );
        const at = error.retryAt.getTime();
        assert.ok(at >= before + 3_600_000 && at <= Date.now() + 3_600_001, error.retryAt.toISOString());
        assert.equal(server.got.length, 1, 'one request, no retries into the limit');
        // The process's other runs do not spend requests into the limit either.
        const next = await failure(engine.transcribe(audio));
        assert.ok(next instanceof TranscriptionRetryLaterError);
        assert.ok(next.retryAfterMs > 3_500_000);
        assert.equal(server.got.length, 1);
      } finally {
        await server.close();
      }
    });
  }

  it('waits short Retry-Afters in the job only up to its waiting budget, then gives the job back', async () => {
    // 429 twice, then a transcript: with a budget of 1.5 s the second 1 s wait is not made.
    const server = await startServer((got, n) =>
      n < 2
        ? { status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'slow down' } } }
        : recognise(got.wav),
    );
    try {
      const error = await failure(engineFor(server.url, { maxWaitMs: 1500 }).transcribe(audio));
      assert.ok(error instanceof TranscriptionRetryLaterError, `${error.name}: ${error.message}`);
      assert.ok(error.retryAfterMs > 0 && error.retryAfterMs <= 1000, String(error.retryAfterMs));
      assert.equal(server.got.length, 2);
    } finally {
      await server.close();
    }
  });

  it('reads retry-after-ms and HTTP dates', () => {
    const headers = (h: Record<string, string>) => new Headers(h);
    assert.equal(retryAfterMs(headers({ 'retry-after-ms': '250', 'retry-after': '1' })), 250);
    assert.equal(retryAfterMs(headers({ 'retry-after': '2.5' })), 2500);
    const date = retryAfterMs(headers({ 'retry-after': new Date(Date.now() + 60_000).toUTCString() }));
    assert.ok(date !== undefined && date > 55_000 && date <= 60_000, String(date));
    assert.equal(retryAfterMs(headers({ 'retry-after': 'soon' })), undefined);
    assert.equal(retryAfterMs(headers({})), undefined);
  });

  it('fails for good, after one request, when the account has no quota left', async () => {
    const server = await startServer(() => ({
      status: 429,
      body: {
        error: {
          message: 'You exceeded your current quota, please check your plan and billing details.',
          type: 'insufficient_quota',
          code: 'insufficient_quota',
        },
      },
    }));
    try {
      const error = await failure(engineFor(server.url).transcribe(audio));
      assert.equal(error.transient, false);
      assert.match(error.message, /quota/);
      assert.equal(server.got.length, 1);
    } finally {
      await server.close();
    }
  });
});

describe('openai engine: what the server answers', () => {
  it('reads times sent as strings as numbers, also in pieces after the first', async () => {
    const server = await startServer((got) =>
      recognise(got.wav, (segments) =>
        segments.map((s) => ({ ...s, start: String(s.start), end: String(s.end), avg_logprob: '-0.2' })),
      ),
    );
    try {
      // Pieces of at most 6.2 s: the bursts after the first are in pieces with an offset ("61" + 0 was 610).
      const segments = await engineFor(server.url, { maxBytes: 200_000 }).transcribe(audio);
      assert.ok(server.got.length >= 3, `${server.got.length} requests`);
      assertBursts(segments);
      assert.ok(Math.abs((segments[0]?.confidence ?? 0) - Math.exp(-0.2)) < 1e-9);
    } finally {
      await server.close();
    }
  });

  it('clamps segments and words to the audio it sent, and drops those after its end', async () => {
    const server = await startServer((got) =>
      recognise(got.wav, (segments) => {
        const last = segments.at(-1) as ReturnType<typeof segment>;
        return [
          ...segments.slice(0, -1),
          { ...last, end: DURATION_S + 5 },
          segment(DURATION_S + 1, DURATION_S + 3, ' after the end'),
        ];
      }),
    );
    try {
      const segments = await engineFor(server.url).transcribe(audio);
      assert.equal(segments.length, BURSTS.length, JSON.stringify(segments));
      assert.equal(segments.at(-1)?.stop, DURATION_S);
      assert.ok(segments.every((s) => s.start <= s.stop && s.stop <= DURATION_S));
    } finally {
      await server.close();
    }
  });

  it("drops segments Whisper's own rule finds without speech (no_speech_prob > 0.6, avg_logprob ≤ -1)", async () => {
    const server = await startServer((got) =>
      recognise(got.wav, (segments) => [
        ...segments,
        segment(2.5, 4.5, ' Thank you for watching.', { avg_logprob: -1.5, no_speech_prob: 0.95 }),
        segment(6.5, 8, ' Bye.', { avg_logprob: undefined, no_speech_prob: 0.8 }),
        segment(10.5, 12, ' confident all the same', { avg_logprob: -0.3, no_speech_prob: 0.9 }),
        segment(14.5, 15, ' barely speech', { avg_logprob: -1.2, no_speech_prob: 0.55 }),
      ]),
    );
    try {
      const segments = await engineFor(server.url).transcribe(audio);
      assert.deepEqual(
        segments.filter((s) => !s.text.startsWith('burst')).map((s) => s.text),
        ['confident all the same', 'barely speech'],
      );
      assert.equal(segments.filter((s) => s.text.startsWith('burst')).length, BURSTS.length);
    } finally {
      await server.close();
    }
  });

  const MALFORMED: [string, (s: ReturnType<typeof segment>) => unknown][] = [
    ['a segment without text', ({ text: _, ...s }) => ({ ...s, content: 'words' })],
    ['a segment whose text is not a string', (s) => ({ ...s, text: 42 })],
    ['times that are not numbers', (s) => ({ ...s, start: 'one', end: 'two' })],
    ['a time that is null', (s) => ({ ...s, end: null })],
    ['a segment that is not an object', () => 'words'],
  ];
  for (const [what, edit] of MALFORMED) {
    it(`fails for good, without retrying, on ${what}`, async () => {
      const server = await startServer((got) => recognise(got.wav, (segments) => segments.map(edit)));
      try {
        const error = await failure(engineFor(server.url).transcribe(audio));
        assert.equal(error.transient, false, error.message);
        assert.match(error.message, /malformed/);
        assert.equal(server.got.length, 1);
      } finally {
        await server.close();
      }
    });
  }

  it('says so, for good, when the server redirects (the body is not kept to send again)', async () => {
    const server = await startServer(() => ({
      status: 307,
      headers: { location: '/v2/audio/transcriptions' },
      body: '',
    }));
    try {
      const error = await failure(engineFor(server.url).transcribe(audio));
      assert.equal(error.transient, false);
      assert.match(error.message, /redirect/);
      assert.equal(server.got.length, 1);
    } finally {
      await server.close();
    }
  });

  it('sends no more pieces once one piece has failed', async () => {
    const server = await startServer((got) =>
      recognise(got.wav, (segments) => segments.map(({ text: _, ...s }) => s)),
    );
    try {
      // Three pieces, one request at a time: the first's bad answer ends the run.
      const error = await failure(engineFor(server.url, { maxBytes: 200_000 }).transcribe(audio));
      assert.equal(error.transient, false);
      // Whatever was still to be sent would be sent by now (each request takes a few ms here).
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(server.got.length, 1);
    } finally {
      await server.close();
    }
  });
});
