/**
 * The `openai` engine: any server speaking the OpenAI audio transcription API — `POST
 * {TRANSCRIBER_URL}/v1/audio/transcriptions`, multipart `file`, `model`, `response_format=verbose_json` and
 * `timestamp_granularities[]=segment` — such as whisper.cpp's server, faster-whisper servers, vLLM or the
 * hosted API. A channel larger than the engine's upload limit is cut in the pauses the speech detector
 * found, so that no word is split; 429 and 5xx answers are retried after their Retry-After.
 */
import { open } from 'node:fs/promises';
import type { Interval } from '../../domain/analysis/figures.ts';
import {
  type ChannelAudio,
  TRANSCRIPTION_SAMPLE_RATE,
  type TranscribedSegment,
  type TranscriptionEngine,
  TranscriptionError,
} from '../../domain/transcription/engine.ts';
import { Limiter } from './limiter.ts';
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
  /** The largest file one request may carry (the hosted API's limit is 25 MB). */
  maxBytes: number;
  /** Attempts of one request when the server answers 429 or 5xx. */
  attempts?: number;
  /** The longest Retry-After waited for in the job; longer, the job is retried later instead. */
  maxRetryAfterMs?: number;
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

/** The part of verbose_json this engine reads. */
interface VerboseJson {
  text?: string;
  segments?: { start: number; end: number; text: string; avg_logprob?: number; no_speech_prob?: number }[];
  words?: { word: string; start: number; end: number }[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Retry-After as milliseconds (seconds or an HTTP date), or undefined. */
function retryAfterMs(value: string | null): number | undefined {
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** Makes the engine. */
export function createOpenAiEngine(options: OpenAiOptions): TranscriptionEngine {
  const url = transcriptionsUrl(options.url);
  const limiter = new Limiter(options.concurrency);
  const attempts = options.attempts ?? 4;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;

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

  async function post(wav: Uint8Array, offset: number): Promise<TranscribedSegment[]> {
    const { fetch, FormData, dispatcher } = await httpClient();
    for (let attempt = 1; ; attempt++) {
      const form = new FormData();
      form.append('file', new Blob([wav], { type: 'audio/wav' }), 'audio.wav');
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
          signal: AbortSignal.timeout(options.timeoutMs),
          dispatcher,
        });
      } catch (error) {
        const timedOut = error instanceof Error && error.name === 'TimeoutError';
        const what = timedOut
          ? `no answer within ${options.timeoutMs / 1000} s`
          : 'the server is unreachable';
        throw new TranscriptionError(`the transcription server failed: ${what}`, true, { cause: error });
      }
      if (response.ok) return segmentsOf(await readJson(response), offset);
      const detail = (await response.text().catch(() => '')).slice(0, 200);
      const retryable = response.status === 429 || response.status >= 500;
      if (!retryable) {
        throw new TranscriptionError(
          `the transcription server answered ${response.status}: ${detail}`,
          false,
        );
      }
      const wait = retryAfterMs(response.headers.get('retry-after')) ?? 1000 * 2 ** (attempt - 1);
      if (attempt >= attempts || wait > maxRetryAfterMs) {
        throw new TranscriptionError(`the transcription server answered ${response.status}: ${detail}`, true);
      }
      await sleep(wait);
    }
  }

  async function transcribe(audio: ChannelAudio): Promise<TranscribedSegment[]> {
    const maxSeconds = Math.floor((options.maxBytes - WAV_HEADER_BYTES) / 2) / TRANSCRIPTION_SAMPLE_RATE;
    if (maxSeconds < 1)
      throw new TranscriptionError('TRANSCRIBER_MAX_BYTES is below one second of audio', false);
    const file = await open(audio.wavPath);
    try {
      const pieces = cutAtPauses(audio.durationS, audio.speech, maxSeconds);
      const results = await Promise.all(
        pieces
          // A piece without speech is not sent: engines invent words in silence.
          .filter((piece) => audio.speech.some((s) => s.stop > piece.start && s.start < piece.stop))
          // Each piece is read when its turn comes: read before, every piece of the channel was in memory at
          // once (a 38 MB channel in 1 MB pieces at concurrency 1 held 78 MB), whatever the limits said.
          .map((piece) =>
            limiter.run(async () => {
              const first = Math.round(piece.start * TRANSCRIPTION_SAMPLE_RATE);
              const samples = Math.round(piece.stop * TRANSCRIPTION_SAMPLE_RATE) - first;
              const wav = new Uint8Array(WAV_HEADER_BYTES + samples * 2);
              wav.set(wavHeader(samples, 1, TRANSCRIPTION_SAMPLE_RATE));
              await file.read(wav, WAV_HEADER_BYTES, samples * 2, WAV_HEADER_BYTES + first * 2);
              return post(wav, first / TRANSCRIPTION_SAMPLE_RATE);
            }),
          ),
      );
      return results.flat();
    } finally {
      await file.close();
    }
  }

  return { name: `openai ${options.model}`, transcribe };
}

async function readJson(response: Response): Promise<VerboseJson> {
  try {
    return (await response.json()) as VerboseJson;
  } catch (error) {
    throw new TranscriptionError('the transcription server answered something that is not JSON', false, {
      cause: error,
    });
  }
}

/** verbose_json's segments, offset to the channel's time; each segment keeps the words inside it. */
function segmentsOf(body: VerboseJson, offset: number): TranscribedSegment[] {
  if (!Array.isArray(body.segments)) {
    throw new TranscriptionError('the transcription server answered without segments (verbose_json)', false);
  }
  const words = Array.isArray(body.words) ? body.words : [];
  return body.segments.map((s) => {
    const inside = words.filter((w) => w.start >= s.start && w.end <= s.end);
    const segment: TranscribedSegment = {
      start: s.start + offset,
      stop: s.end + offset,
      text: s.text.trim(),
    };
    if (typeof s.avg_logprob === 'number') segment.confidence = Math.min(1, Math.exp(s.avg_logprob));
    if (inside.length > 0) {
      segment.words = inside.map((w) => ({
        word: w.word.trim(),
        start: w.start + offset,
        stop: w.end + offset,
      }));
    }
    return segment;
  });
}
