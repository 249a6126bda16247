/**
 * Decoding any accepted container to 16-bit PCM with ffmpeg, streamed: the object is fed to ffmpeg piece by
 * piece and the PCM is read from its stdout in chunks, so a 2-hour recording is never whole in memory.
 *
 * The ffmpeg binary is the one `npm install` brings (@ffmpeg-installer/ffmpeg ships a static build inside
 * its package, no download); the system's `ffmpeg` is the fallback where that package has no build (its
 * measured speed is lower: docs/analysis.md), and FFMPEG_PATH overrides both.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ObjectReader } from '../storage/storage.ts';
import { makeWorkDir } from '../work-dir.ts';

/** The ffmpeg in use, as /readyz reports it. */
export interface Decoder {
  /** `bundled` (from the npm package), `system` (on PATH) or `configured` (FFMPEG_PATH). */
  source: 'bundled' | 'system' | 'configured';
  path: string;
  /** ffmpeg's first line of `-version`. */
  version: string;
}

/** The bytes are not media ffmpeg can decode: retrying cannot help. */
export class UndecodableError extends Error {
  override name = 'UndecodableError';
}

/** The decoder gave nothing for the stall limit while it was waited on: stopped; a later attempt may do better. */
export class DecoderStalledError extends Error {
  override name = 'DecoderStalledError';
}

/**
 * The recording decodes to more than the longest allowed (RECORDING_MAX_SECONDS): retrying cannot help. A
 * header's duration may be false or absent, so it is the decoded audio that is counted: 85 kB of FLAC held
 * 10 hours of silence, and its transcription wrote 2.2 GB of channels to the temporary folder.
 */
export class RecordingTooLongError extends Error {
  override name = 'RecordingTooLongError';
}

/**
 * How long the decoder may give nothing while it is waited on, by default: longer than storage may take to
 * fail a read (S3_TIMEOUT, the SDK's three tries), so only a decoder that hangs or spins is stopped. A running
 * job's lease is renewed, so without it such a decoder held its worker's slot for good.
 */
const DECODE_STALL_MS = 600_000;

function versionOf(path: string): string | undefined {
  const run = spawnSync(path, ['-version'], { encoding: 'utf8', timeout: 10_000 });
  if (run.status !== 0) return undefined;
  return run.stdout.split('\n')[0]?.trim();
}

function bundledPath(): string | undefined {
  try {
    return (createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string }).path;
  } catch {
    return undefined; // no build for this platform
  }
}

const found = new Map<string, Decoder | undefined>();

/**
 * Finds the decoder: FFMPEG_PATH when configured, else the bundled build, else `ffmpeg` on PATH. Looked up
 * once per process (it runs `ffmpeg -version`).
 */
export function findDecoder(configuredPath?: string): Decoder | undefined {
  const key = configuredPath ?? '';
  if (!found.has(key)) found.set(key, lookUpDecoder(configuredPath));
  return found.get(key);
}

function lookUpDecoder(configuredPath: string | undefined): Decoder | undefined {
  const candidates: [Decoder['source'], string | undefined][] = configuredPath
    ? [['configured', configuredPath]]
    : [
        ['bundled', bundledPath()],
        ['system', 'ffmpeg'],
      ];
  for (const [source, path] of candidates) {
    const version = path ? versionOf(path) : undefined;
    if (path && version) return { source, path, version };
  }
  return undefined;
}

/** Containers whose index may sit at the end (ISO BMFF): ffmpeg must be able to seek, so they go via a file. */
const NEEDS_SEEK = new Set(['mp4', 'mov', '3gp', 'm4a']);

/** How to decode. */
export interface PcmOptions {
  /** Output channels: 1, or 2 (the first two channels of the source). */
  channels: 1 | 2;
  sampleRate: number;
  /** The container as the probe named it (decides whether ffmpeg needs a seekable file). */
  container: string | null;
  /** Every chunk yielded holds a whole number of this many sample frames (a detector's frame). */
  frameSamples?: number;
  /** Milliseconds the decoder may give nothing while waited on (DECODE_STALL_MS unless given). */
  stallMs?: number;
  /** Seconds of audio decoded at most; past them, RecordingTooLongError (no limit unless given). */
  maxSeconds?: number;
}

/** Bytes read from storage at a time: small, so that garbage stays small between collections. */
const CHUNK = 256 * 1024;

/** The object's bytes in order, read piece by piece. */
async function* objectBytes(reader: ObjectReader): AsyncGenerator<Uint8Array> {
  for (let offset = 0; offset < reader.size; offset += CHUNK) {
    const bytes = await reader.read(offset, CHUNK);
    if (bytes.length === 0) break;
    yield bytes;
  }
}

/** A failure to read the object (storage), as opposed to the sink going away. */
class ReadFailed extends Error {
  override name = 'ReadFailed';
}

/** Writes the object to `sink` with backpressure; a storage error is thrown as ReadFailed's cause. */
async function copyObject(reader: ObjectReader, sink: NodeJS.WritableStream): Promise<void> {
  async function* guarded() {
    try {
      yield* objectBytes(reader);
    } catch (error) {
      throw new ReadFailed('reading the object failed', { cause: error });
    }
  }
  await pipeline(Readable.from(guarded()), sink);
}

/**
 * Decodes the object to interleaved 16-bit PCM, yielded in chunks of whole frames (a trailing partial
 * frame is dropped). Throws
 * UndecodableError when ffmpeg cannot decode the bytes; errors of reading the object pass through.
 */
export async function* decodePcm(
  decoder: Decoder,
  reader: ObjectReader,
  options: PcmOptions,
): AsyncGenerator<Int16Array> {
  let spool: string | undefined;
  let input = 'pipe:0';
  if (options.container && NEEDS_SEEK.has(options.container)) {
    spool = await makeWorkDir('decode');
    input = join(spool, 'input');
    try {
      await copyObject(reader, createWriteStream(input)); // flushed and closed before ffmpeg opens it
    } catch (error) {
      // A failed read would leave a partial copy of the recording in the temporary folder.
      await rm(spool, { recursive: true, force: true });
      throw error;
    }
  }
  // The audio is put on the file's timeline from 0 (aresample's first_pts): a video's sound may start
  // later than its picture (1.94 s in one), and the player keeps it there, so the analysis's and the
  // transcript's times were early by that much.
  const timeline = 'aresample=async=1:first_pts=0';
  const mapping =
    options.channels === 1
      ? ['-af', timeline, '-ac', '1']
      : ['-af', `pan=stereo|c0=c0|c1=c1,${timeline}`, '-ac', '2'];
  const child = spawn(
    decoder.path,
    [
      '-nostdin',
      '-hide_banner',
      '-loglevel',
      'error',
      // The input is the recording and nothing else: no protocol beyond its own, and a spooled copy read only
      // as what the probe found (the mov family). Guessing the format of a spooled file, ffmpeg took a
      // playlist for HLS and read the files it named, a recording of another company's among them.
      ...(spool ? ['-protocol_whitelist', 'file', '-f', 'mov'] : ['-protocol_whitelist', 'pipe']),
      '-i',
      input,
      // The first audio stream, the one the probe described (channels, rate): by default ffmpeg takes the
      // stream with the most channels, which may be another.
      '-map',
      '0:a:0',
      '-vn',
      '-sn',
      '-dn',
      ...mapping,
      '-ar',
      String(options.sampleRate),
      '-f',
      's16le',
      'pipe:1',
    ],
    { stdio: [spool ? 'ignore' : 'pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  // A decoder that cannot be started (removed after start, EAGAIN) emits 'error': without a listener that
  // ended the process. It is a failure a later attempt may not have, so not UndecodableError.
  let startError: Error | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.on('error', (error) => {
      startError ??= new Error(`the decoder could not be run: ${error.message}`, { cause: error });
      resolve(null);
    });
    child.on('close', (code) => resolve(code));
  });
  let feedError: unknown;
  if (child.stdin) {
    copyObject(reader, child.stdin).catch((error: unknown) => {
      // ffmpeg may stop reading early (an error in the bytes): a broken pipe is its error to report.
      if (!(error instanceof ReadFailed)) return;
      feedError = error.cause;
      child.kill('SIGKILL');
    });
  }
  const frameBytes = options.channels * 2 * (options.frameSamples ?? 1);
  let carry = Buffer.alloc(0);
  let done = false;
  const stallMs = options.stallMs ?? DECODE_STALL_MS;
  const chunks = (child.stdout as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  /** The next chunk; only the time spent waiting for it counts (not the time the caller holds a chunk). */
  const nextChunk = async (): Promise<IteratorResult<Buffer>> => {
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new DecoderStalledError(`the decoder gave nothing for ${stallMs / 1000} s; stopped`));
      }, stallMs);
    });
    const next = chunks.next();
    next.catch(() => {}); // after a stall, whatever becomes of the read is no one's concern
    try {
      return await Promise.race([next, stalled]);
    } finally {
      clearTimeout(timer);
    }
  };
  const maxBytes =
    options.maxSeconds === undefined
      ? Number.POSITIVE_INFINITY
      : options.maxSeconds * options.sampleRate * options.channels * 2;
  let decodedBytes = 0;
  try {
    for (let next = await nextChunk(); !next.done; next = await nextChunk()) {
      const chunk = next.value;
      decodedBytes += chunk.length;
      if (decodedBytes > maxBytes) {
        throw new RecordingTooLongError(
          `the recording is longer than ${options.maxSeconds} s (RECORDING_MAX_SECONDS), the most that is analysed or transcribed`,
        );
      }
      const bytes = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
      const usable = bytes.length - (bytes.length % frameBytes);
      carry = Buffer.from(bytes.subarray(usable));
      // A copy: the chunk may sit at an odd offset, and an Int16Array needs an aligned buffer.
      const samples = new Int16Array(usable / 2);
      Buffer.from(samples.buffer).set(bytes.subarray(0, usable));
      yield samples;
    }
    const code = await exited;
    if (startError) throw startError;
    if (feedError) throw feedError;
    if (code !== 0) {
      const last = (stderr.trim().split('\n').at(-1) ?? '').replaceAll(input, 'input');
      throw new UndecodableError(`the recording could not be decoded${last ? `: ${last}` : ''}`);
    }
    done = true;
  } finally {
    if (!done) child.kill('SIGKILL');
    if (spool) await rm(spool, { recursive: true, force: true });
  }
}
