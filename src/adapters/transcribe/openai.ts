/**
 * The `openai` engine: any server speaking the OpenAI audio transcription API — `POST
 * {TRANSCRIBER_URL}/v1/audio/transcriptions`, multipart `file`, `model`, `response_format=verbose_json` and
 * `timestamp_granularities[]=segment` — such as whisper.cpp's server, faster-whisper servers, vLLM or the
 * hosted API. A channel larger than the engine's upload limit is cut in the pauses the speech detector
 * found, so that no word is split; a piece the server refuses as too large (413) is cut in half and sent
 * again. 429 and 5xx answers are retried in place after a short Retry-After; a long one ends the run with a
 * TranscriptionRetryLaterError that says when to try again.
 */
import { openAsBlob } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Interval } from '../../domain/analysis/figures.ts';
import {
  type ChannelAudio,
  stoppedError,
  TRANSCRIPTION_SAMPLE_RATE,
  type TranscribedSegment,
  type TranscriptionEngine,
  TranscriptionError,
} from '../../domain/transcription/engine.ts';
import { TranscriptionRetryLaterError } from './errors.ts';
import { Limiter } from './limiter.ts';
import { segmentsOf } from './verbose-json.ts';
import { WAV_HEADER_BYTES, wavHeader } from './wav.ts';

/** How to reach the server. */
export interface OpenAiOptions {
  url: string;
  apiKey: string | undefined;
  model: string;
  /** Requests in flight at once in this process. */
  concurrency: number;
  /** Per request. */
  timeoutMs: number;
  /**
   * The largest WAV file one request carries. The hosted API's limit of 26,214,400 bytes is on the whole
   * request body, multipart included (a 26,214,400-byte file made a 26,214,996-byte body): leave room, 24 MiB.
   * A server that refuses a piece as too large (413) has it halved, and later pieces cut to that size.
   */
  maxBytes: number;
  /** Attempts of one request when the server answers 429 or 5xx. */
  attempts?: number;
  /**
   * The longest Retry-After (or `retry-after-ms`) waited out in the job, 60 s by default; a longer one ends
   * the run with a TranscriptionRetryLaterError carrying the time to try again.
   */
  maxRetryAfterMs?: number;
  /**
   * The most one transcription (one channel) waits in all, for Retry-After and backoff, before it gives the
   * job back to the queue the same way; 120 s by default. A wait holds a worker slot.
   */
  maxWaitMs?: number;
  /** The smallest piece a 413 cuts down to (64 KiB, 2 s of audio, by default); smaller, the 413 is final. */
  minPieceBytes?: number;
}

/** The endpoint: TRANSCRIBER_URL may be the server's root or its `/v1`. */
export function transcriptionsUrl(base: string): string {
  const root = base.replace(/\/+$/, '');
  if (root.endsWith('/audio/transcriptions')) return root;
  return root.endsWith('/v1') ? `${root}/audio/transcriptions` : `${root}/v1/audio/transcriptions`;
}

/**
 * Cuts [0, duration) into pieces of at most `maxSeconds`, each cut in the middle of a pause between two
 * speech intervals; where speech runs longer than a piece may, it is cut at the limit.
 */
export function cutAtPauses(durationS: number, speech: readonly Interval[], maxSeconds: number): Interval[] {
  const pauses = speech.slice(1).map((s, i) => ((speech[i] as Interval).stop + s.start) / 2);
  const pieces: Interval[] = [];
  let start = 0;
  while (durationS - start > maxSeconds) {
    const limit = start + maxSeconds;
    const cut = pauses.filter((p) => p > start + 0.5 && p <= limit).at(-1) ?? limit;
    pieces.push({ start, stop: cut });
    start = cut;
  }
  pieces.push({ start, stop: durationS });
  return pieces;
}

/** Retry-After as milliseconds (seconds or an HTTP date; the hosted API's `retry-after-ms` first), or undefined. */
export function retryAfterMs(headers: { get(name: string): string | null }): number | undefined {
  const ms = headers.get('retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Number(ms);
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** An error answer's OpenAI error code or type (`insufficient_quota`), when its body is the API's error JSON. */
function errorCodeOf(body: string): string | undefined {
  try {
    const error = (JSON.parse(body) as { error?: { code?: unknown; type?: unknown } } | null)?.error;
    const code = error?.code ?? error?.type;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/** What post() says of a piece the server refused as too large: cut it and send the parts. */
const TOO_LARGE = Symbol('too large');

/** One transcribe() call's shared state: what its pieces have waited, and its end when one piece failed. */
interface Run {
  waitedMs: number;
  readonly stop: AbortController;
}

const seconds = (ms: number) => `${Math.ceil(ms / 1000)} s`;

/** Makes the engine. */
export function createOpenAiEngine(options: OpenAiOptions): TranscriptionEngine {
  const url = transcriptionsUrl(options.url);
  const limiter = new Limiter(options.concurrency);
  const attempts = options.attempts ?? 4;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
  const maxWaitMs = options.maxWaitMs ?? 120_000;
  const minPieceBytes = Math.max(
    WAV_HEADER_BYTES + 2 * TRANSCRIPTION_SAMPLE_RATE,
    options.minPieceBytes ?? 65_536,
  );
  /** The largest piece sent: TRANSCRIBER_MAX_BYTES, or less once the server refused a piece as too large. */
  let pieceBytes = options.maxBytes;
  /**
   * Until when (ms since the epoch) the server asked this process to send nothing (Retry-After): every
   * piece of every run waits for it, or gives its job back, instead of spending requests into a 429.
   */
  let blockedUntil = 0;
  /** The answer that asked for it. */
  let blockedBy = '';

  /**
   * undici's own fetch with an agent whose header and body timeouts are the engine's: Node's fetch gives up
   * waiting for headers at 300 s whatever its signal says, so a TRANSCRIBER_TIMEOUT above that (600 s by
   * default) failed at 300 s as "unreachable". Loaded at the first request, by the processes that transcribe.
   */
  let http:
    | Promise<{
        fetch: typeof import('undici').fetch;
        FormData: typeof import('undici').FormData;
        dispatcher: import('undici').Agent;
      }>
    | undefined;
  const httpClient = () => {
    http ??= import('undici').then(({ Agent, fetch, FormData }) => ({
      fetch,
      FormData,
      dispatcher: new Agent({ headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs }),
    }));
    return http;
  };

  /** Waits `ms` within the run's budget, or throws the error that gives the job back until then. */
  async function waitOrGiveBack(run: Run, until: number, why: string): Promise<void> {
    const ms = until - Date.now();
    if (ms <= 0) return;
    if (ms > maxRetryAfterMs || run.waitedMs + ms > maxWaitMs) {
      throw new TranscriptionRetryLaterError(`${why}; retry in ${seconds(ms)}`, until);
    }
    run.waitedMs += ms;
    await sleep(ms, undefined, { signal: run.stop.signal });
  }

  /**
   * Sends one piece (`samples` sample frames from `first`) and reads its segments, retrying 429 and 5xx.
   * The WAV is a header and a slice of the channel's file-backed Blob, streamed from disk as it is sent.
   * Each piece was held three times while its request ran (a Uint8Array, a Blob copy of it, and fetch's copy
   * of the body kept for a redirect): a 60-minute stereo call's RSS went from 194 to 560 MB.
   */
  async function post(
    channel: Blob,
    first: number,
    samples: number,
    run: Run,
  ): Promise<TranscribedSegment[] | typeof TOO_LARGE> {
    const { fetch, FormData, dispatcher } = await httpClient();
    const bytes = WAV_HEADER_BYTES + samples * 2;
    const wav = new Blob(
      [
        wavHeader(samples, 1, TRANSCRIPTION_SAMPLE_RATE),
        channel.slice(WAV_HEADER_BYTES + first * 2, WAV_HEADER_BYTES + (first + samples) * 2),
      ],
      { type: 'audio/wav' },
    );
    for (let attempt = 1; ; attempt++) {
      await waitOrGiveBack(run, blockedUntil, blockedBy);
      const form = new FormData();
      form.append('file', wav, 'audio.wav');
      form.append('model', options.model);
      form.append('response_format', 'verbose_json');
      form.append('timestamp_granularities[]', 'segment');
      form.append('timestamp_granularities[]', 'word');
      let response: Awaited<ReturnType<typeof fetch>>;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
          body: form,
          signal: AbortSignal.any([AbortSignal.timeout(options.timeoutMs), run.stop.signal]),
          // Not followed: fetch keeps a copy of a body it may have to send again to a redirect's target (the
          // request is cloned and its body teed, the unsent branch holding every chunk), 25 MB a piece.
          redirect: 'error',
          dispatcher,
        });
      } catch (error) {
        if ((error as { cause?: { message?: unknown } }).cause?.message === 'unexpected redirect') {
          throw new TranscriptionError(
            'the transcription server answered with a redirect: set TRANSCRIBER_URL to where it leads',
            false,
            { cause: error },
          );
        }
        const timedOut = error instanceof Error && error.name === 'TimeoutError';
        const what = timedOut
          ? `no answer within ${options.timeoutMs / 1000} s`
          : 'the server is unreachable';
        throw new TranscriptionError(`the transcription server failed: ${what}`, true, { cause: error });
      }
      if (response.ok) {
        return segmentsOf(
          await readJson(response),
          first / TRANSCRIPTION_SAMPLE_RATE,
          samples / TRANSCRIPTION_SAMPLE_RATE,
        );
      }
      const body = await response.text().catch(() => '');
      const answered = `the transcription server answered ${response.status}: ${body.slice(0, 200)}`;
      if (response.status === 413) {
        // Too large, whatever TRANSCRIBER_MAX_BYTES says (the hosted API counts the multipart body): half the
        // size, for this piece and the ones after it, down to a floor.
        const half = WAV_HEADER_BYTES + Math.ceil(samples / 2) * 2;
        if (half < minPieceBytes) {
          throw new TranscriptionError(`${answered} (a piece of ${bytes} bytes, cut no smaller)`, false);
        }
        pieceBytes = Math.min(pieceBytes, half);
        return TOO_LARGE;
      }
      // An account out of quota stays so until someone pays: retrying only spends requests.
      const retryable =
        (response.status === 429 || response.status >= 500) && errorCodeOf(body) !== 'insufficient_quota';
      if (!retryable) throw new TranscriptionError(answered, false);
      const after = retryAfterMs(response.headers);
      if (after !== undefined && Date.now() + after > blockedUntil) {
        blockedUntil = Date.now() + after;
        blockedBy = answered;
      }
      // Its attempts spent on short waits: an ordinary transient failure, which spends one of the job's.
      if (attempt >= attempts) throw new TranscriptionError(answered, true);
      // With a Retry-After, the top of the loop waits it out (or gives the job back); without, 1, 2, 4 s.
      if (after === undefined) {
        const backoff = 1000 * 2 ** (attempt - 1);
        if (run.waitedMs + backoff > maxWaitMs) throw new TranscriptionError(answered, true);
        run.waitedMs += backoff;
        await sleep(backoff, undefined, { signal: run.stop.signal });
      }
    }
  }

  async function transcribe(audio: ChannelAudio, signal?: AbortSignal): Promise<TranscribedSegment[]> {
    const maxSamples = (size: number) => Math.floor((size - WAV_HEADER_BYTES) / 2);
    if (maxSamples(options.maxBytes) < TRANSCRIPTION_SAMPLE_RATE)
      throw new TranscriptionError('TRANSCRIBER_MAX_BYTES is below one second of audio', false);
    const channel = await openAsBlob(audio.wavPath);
    const run: Run = { waitedMs: 0, stop: new AbortController() };
    // The caller's stop ends this channel's requests and waits as one failed piece of it would.
    const stopRun = () => run.stop.abort();
    signal?.addEventListener('abort', stopRun, { once: true });
    const hasSpeech = (piece: Interval) =>
      audio.speech.some((s) => s.stop > piece.start && s.start < piece.stop);

    /** Cuts a piece (in the channel's time) in its pauses into parts of at most `maxSeconds`, and sends them. */
    const cut = async (piece: Interval, maxSeconds: number): Promise<TranscribedSegment[]> => {
      const speech = audio.speech
        .filter((s) => s.stop > piece.start && s.start < piece.stop)
        .map((s) => ({
          start: Math.max(s.start, piece.start) - piece.start,
          stop: Math.min(s.stop, piece.stop) - piece.start,
        }));
      const parts = cutAtPauses(piece.stop - piece.start, speech, maxSeconds).map((p) => ({
        start: p.start + piece.start,
        stop: p.stop + piece.start,
      }));
      return (await Promise.all(parts.map(send))).flat();
    };

    const limitSeconds = () => maxSamples(pieceBytes) / TRANSCRIPTION_SAMPLE_RATE;

    const send = async (piece: Interval): Promise<TranscribedSegment[]> => {
      // A piece without speech is not sent: engines invent words in silence.
      if (!hasSpeech(piece)) return [];
      // Too large since a 413 (this piece's or another's): cut again before sending.
      if (piece.stop - piece.start > limitSeconds() + 1e-6) return cut(piece, limitSeconds());
      const first = Math.round(piece.start * TRANSCRIPTION_SAMPLE_RATE);
      // A piece of the largest size may round to one sample more: that one is left out.
      const samples = Math.min(
        Math.round(piece.stop * TRANSCRIPTION_SAMPLE_RATE) - first,
        maxSamples(pieceBytes),
      );
      if (samples <= 0) return [];
      const result = await limiter.run(async () => {
        // A piece waiting for its turn when another failed is not sent: the run has failed already.
        if (run.stop.signal.aborted) return [];
        // Nor one that a 413 met while it waited showed too large: it is cut first.
        if (samples > maxSamples(pieceBytes)) return TOO_LARGE;
        return post(channel, first, samples, run);
      });
      return result === TOO_LARGE ? send(piece) : result;
    };

    try {
      if (signal?.aborted) throw stoppedError();
      const segments = await cut({ start: 0, stop: audio.durationS }, limitSeconds());
      // Pieces that waited for their turn return nothing once the run is stopped: not a transcript.
      if (signal?.aborted) throw stoppedError();
      return segments;
    } finally {
      signal?.removeEventListener('abort', stopRun);
      // Ends the others' requests and waits once one piece has failed (or all are done).
      run.stop.abort();
    }
  }

  return { name: `openai ${options.model}`, transcribe };
}

async function readJson(response: { json(): Promise<unknown> }): Promise<unknown> {
  try {
    return await response.json();
  } catch (error) {
    throw new TranscriptionError('the transcription server answered something that is not JSON', false, {
      cause: error,
    });
  }
}
