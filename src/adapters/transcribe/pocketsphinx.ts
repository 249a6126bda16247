/**
 * The `pocketsphinx` engine: CMU PocketSphinx from Debian's `pocketsphinx` and `pocketsphinx-en-us`
 * packages, run as `pocketsphinx_continuous` on the channel's WAV file. Local and offline (the audio never
 * leaves the machine), English only, and far less accurate than a Whisper model: README "Transcription"
 * gives its measured word error rate.
 */
import { spawn } from 'node:child_process';
import {
  type ChannelAudio,
  stoppedError,
  type TranscribedSegment,
  type TranscribedWord,
  type TranscriptionEngine,
  TranscriptionError,
} from '../../domain/transcription/engine.ts';
import { Limiter } from './limiter.ts';

/** How to run pocketsphinx. */
export interface PocketsphinxOptions {
  /** The binary; `pocketsphinx_continuous` on PATH by default. */
  binary?: string;
  /** Recognisers run at once in this process (each takes one core). */
  concurrency: number;
  /** TRANSCRIBER_TIMEOUT: the time one run may take per SCALE_S seconds of its channel (see runLimitMs). */
  timeoutMs: number;
}

/** Seconds of a channel that one TRANSCRIBER_TIMEOUT is for. */
const SCALE_S = 600;

/**
 * How long one run over a channel may take: TRANSCRIBER_TIMEOUT per started 10 minutes of it. A run covers
 * the whole channel, at about a third of real time on one core (15-20 CPU-minutes for an hour), so a fixed
 * limit of 600 s failed every channel longer than half an hour, five times over before giving up.
 */
export function runLimitMs(timeoutMs: number, durationS: number): number {
  return timeoutMs * Math.max(1, Math.ceil(durationS / SCALE_S));
}

/** Tokens that are not words: utterance marks, silence, and noise fillers such as `[NOISE]` or `++UH++`. */
const NOT_A_WORD = /^(<s>|<\/s>|<sil>|\[.*\]|\+\+.*\+\+)$/;
const WORD_LINE = /^(\S+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?)$/;

/**
 * Parses `pocketsphinx_continuous -time yes` output: per utterance, its hypothesis line, then one line per
 * token (`word start end posterior`, times from the start of the file). Each utterance with words is a
 * segment; alternative pronunciations (`the(2)`) are the word itself.
 */
export function parsePocketsphinx(output: string): TranscribedSegment[] {
  const segments: TranscribedSegment[] = [];
  let words: TranscribedWord[] = [];
  const flush = () => {
    if (words.length > 0) {
      const first = words[0] as TranscribedWord;
      const last = words.at(-1) as TranscribedWord;
      const confidence = words.reduce((sum, w) => sum + (w.confidence ?? 0), 0) / words.length;
      segments.push({
        start: first.start,
        stop: last.stop,
        text: words.map((w) => w.word).join(' '),
        confidence,
        words,
      });
    }
    words = [];
  };
  for (const line of output.split('\n')) {
    const match = WORD_LINE.exec(line.trim());
    if (!match) continue;
    const [, token = '', start, stop, posterior] = match;
    if (token === '<s>' || token === '</s>') {
      if (token === '<s>') flush();
      continue;
    }
    if (NOT_A_WORD.test(token)) continue;
    words.push({
      word: token.replace(/\(\d+\)$/, ''),
      start: Number(start),
      stop: Number(stop),
      confidence: Math.min(1, Math.max(0, Number(posterior))),
    });
  }
  flush();
  return segments;
}

/** Makes the pocketsphinx engine. */
export function createPocketsphinxEngine(options: PocketsphinxOptions): TranscriptionEngine {
  const binary = options.binary ?? 'pocketsphinx_continuous';
  const limiter = new Limiter(options.concurrency);
  return {
    name: 'pocketsphinx en-us',
    transcribe: (audio, signal) =>
      limiter.run(() => recognise(binary, audio, runLimitMs(options.timeoutMs, audio.durationS), signal)),
  };
}

function recognise(
  binary: string,
  audio: ChannelAudio,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<TranscribedSegment[]> {
  return new Promise((resolve, reject) => {
    // A channel that waited for its turn after the run failed is not started; one running is killed.
    if (signal?.aborted) return reject(stoppedError());
    const child = spawn(binary, ['-infile', audio.wavPath, '-time', 'yes', '-logfn', '/dev/null'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(signal ? { signal, killSignal: 'SIGKILL' as const } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-2000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (error.name === 'AbortError') return reject(stoppedError());
      const missing = error.code === 'ENOENT';
      reject(
        new TranscriptionError(
          missing
            ? `${binary} is not installed (Debian packages pocketsphinx and pocketsphinx-en-us)`
            : `${binary} could not be started: ${error.message}`,
          !missing,
        ),
      );
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (signal === 'SIGKILL') {
        reject(new TranscriptionError(`pocketsphinx took longer than ${timeoutMs / 1000} s`, true));
      } else if (code !== 0) {
        const last = stderr.trim().split('\n').at(-1) ?? '';
        reject(new TranscriptionError(`pocketsphinx failed (exit ${code})${last ? `: ${last}` : ''}`, false));
      } else {
        resolve(parsePocketsphinx(stdout));
      }
    });
  });
}
