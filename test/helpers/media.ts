/**
 * Test media and uploads: small files made with ffmpeg (once per test file, into a temp dir) for every
 * container of the spec's tables, a conversation inserted directly (call/create is built elsewhere), and
 * uploads issued through the domain's issueUpload.
 */
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { conversations } from '../../src/adapters/db/schema.ts';
import { issueUpload, type UploadUrlResponse } from '../../src/domain/uploads/uploads.ts';
import type { TestCompany } from './fixtures.ts';
import type { Harness } from './harness.ts';

const run = promisify(execFile);

/** Runs ffmpeg quietly, overwriting its output. */
const ffmpeg = (args: string[]) => run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args]);

/** One test file: its ffmpeg output arguments, and what verification should find in it. */
export interface MediaSample {
  name: string;
  /** ffmpeg arguments after the inputs. */
  args: string[];
  video: boolean;
  channels: number;
  /** The container verification should name. */
  container: string;
}

const AUDIO_IN = ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1:sample_rate=8000'];
const VIDEO_IN = ['-f', 'lavfi', '-i', 'testsrc=duration=1:size=64x48:rate=10', ...AUDIO_IN];
const stereo = ['-ac', '2'];
const mono = ['-ac', '1'];

/** Every sample the suite uses: the spec's video containers, audio containers, stereo and mono. */
export const SAMPLES: MediaSample[] = [
  { name: 'stereo.wav', args: [...stereo], video: false, channels: 2, container: 'wav' },
  { name: 'mono.wav', args: [...mono], video: false, channels: 1, container: 'wav' },
  {
    name: 'stereo.mp3',
    args: [...stereo, '-c:a', 'libmp3lame'],
    video: false,
    channels: 2,
    container: 'mp3',
  },
  { name: 'mono.mp3', args: [...mono, '-c:a', 'libmp3lame'], video: false, channels: 1, container: 'mp3' },
  { name: 'stereo.m4a', args: [...stereo, '-c:a', 'aac'], video: false, channels: 2, container: 'mp4' },
  {
    name: 'audio.mp4',
    args: [...stereo, '-c:a', 'aac', '-f', 'mp4'],
    video: false,
    channels: 2,
    container: 'mp4',
  },
  { name: 'audio.webm', args: [...mono, '-c:a', 'libopus'], video: false, channels: 1, container: 'webm' },
  { name: 'stereo.ogg', args: [...stereo, '-c:a', 'libvorbis'], video: false, channels: 2, container: 'ogg' },
  { name: 'stereo.flac', args: [...stereo, '-c:a', 'flac'], video: false, channels: 2, container: 'flac' },
  {
    name: 'audio.aac',
    args: [...stereo, '-c:a', 'aac', '-f', 'adts'],
    video: false,
    channels: 2,
    container: 'aac',
  },
  {
    name: 'video.3gp',
    args: [...mono, '-c:v', 'mpeg4', '-c:a', 'aac', '-f', '3gp'],
    video: true,
    channels: 1,
    container: '3gp',
  },
  {
    name: 'video.flv',
    args: [...stereo, '-ar', '22050', '-c:v', 'flv', '-c:a', 'libmp3lame'],
    video: true,
    channels: 2,
    container: 'flv',
  },
  {
    name: 'video.mov',
    args: [...stereo, '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac'],
    video: true,
    channels: 2,
    container: 'mov',
  },
  {
    name: 'video.mp4',
    args: [...stereo, '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac'],
    video: true,
    channels: 2,
    container: 'mp4',
  },
  {
    name: 'video.mpeg',
    args: [...stereo, '-ar', '44100', '-r', '25', '-c:v', 'mpeg1video', '-c:a', 'mp2', '-f', 'mpeg'],
    video: true,
    channels: 2,
    container: 'mpeg',
  },
  {
    name: 'video.webm',
    args: [...stereo, '-c:v', 'libvpx', '-b:v', '100k', '-c:a', 'libopus'],
    video: true,
    channels: 2,
    container: 'webm',
  },
  {
    name: 'video.wmv',
    args: [...stereo, '-c:v', 'wmv2', '-c:a', 'wmav2'],
    video: true,
    channels: 2,
    container: 'asf',
  },
  {
    name: 'video.mkv',
    args: [...stereo, '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac'],
    video: true,
    channels: 2,
    container: 'mkv',
  },
  {
    name: 'silent.mp4',
    args: ['-an', '-c:v', 'libx264', '-pix_fmt', 'yuv420p'],
    video: true,
    channels: 0,
    container: 'mp4',
  },
];

/**
 * Bytes that look random but are the same on every run (a SHA-256 chain from a fixed seed): fresh random
 * bytes can hold enough MPEG frame headers for the media prober to call them audio, which made the
 * "not a media file" test fail now and then ("uploaded as audio but the file has no audio stream").
 */
function noiseBytes(size: number): Buffer {
  const blocks: Buffer[] = [];
  let block = createHash('sha256').update('cqs test noise').digest();
  for (let total = 0; total < size; total += block.length) {
    blocks.push(block);
    block = createHash('sha256').update(block).digest();
  }
  return Buffer.concat(blocks).subarray(0, size);
}

/** The generated files by name, plus `random.bin` (not media) and `picture.png` (not media either). */
export interface TestMedia {
  dir: string;
  path(name: string): string;
  remove(): Promise<void>;
}

/** Makes the samples named (all by default) with ffmpeg, a few at a time, plus non-media files. */
export async function makeTestMedia(names?: string[]): Promise<TestMedia> {
  const dir = await mkdtemp(join(tmpdir(), 'cqs-media-'));
  const wanted = names ? SAMPLES.filter((s) => names.includes(s.name)) : SAMPLES;
  const jobs = wanted.map((sample) => async () => {
    const inputs = sample.video ? VIDEO_IN : AUDIO_IN;
    await ffmpeg([...inputs, ...sample.args, join(dir, sample.name)]);
  });
  jobs.push(async () => {
    await ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'testsrc=duration=1:size=64x48:rate=1',
      '-frames:v',
      '1',
      join(dir, 'picture.png'),
    ]);
  });
  jobs.push(() => writeFile(join(dir, 'random.bin'), noiseBytes(20_000)));
  jobs.push(() => writeFile(join(dir, 'text.txt'), 'this is not a recording\n'.repeat(200)));
  const queue = [...jobs];
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let job = queue.shift(); job; job = queue.shift()) await job();
    }),
  );
  return {
    dir,
    path: (name) => join(dir, name),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Inserts a conversation of the company's agent directly (call/create is another issue's). */
export async function addConversation(
  h: Harness,
  company: TestCompany,
  options: { separation?: 'diarize' | 'channels'; conversationId?: string } = {},
): Promise<{ uuid: string; conversationId: string }> {
  const conversationId = options.conversationId ?? `conv-${randomUUID().slice(0, 8)}`;
  const [row] = await h.services.database.db
    .insert(conversations)
    .values({
      companyId: company.id,
      agentUserId: company.agent.id,
      conversationId,
      productId: company.productId,
      startTime: Date.now() / 1000,
      speakerSeparation: options.separation ?? 'diarize',
    })
    .returning({ id: conversations.id });
  if (!row) throw new Error('no conversation inserted');
  return { uuid: row.id, conversationId };
}

/** Issues an upload for a new conversation of the company. */
export async function issueTestUpload(
  h: Harness,
  company: TestCompany,
  options: {
    filename?: string;
    contentType?: string;
    mediaKind?: 'audio' | 'video';
    separation?: 'diarize' | 'channels';
    expiresIn?: number;
  } = {},
): Promise<UploadUrlResponse> {
  const conversation = await addConversation(h, company, { separation: options.separation ?? 'diarize' });
  return issueUpload(h.services.database.db, h.services.storage, options.expiresIn ?? 3600, {
    companyId: company.id,
    conversationUuid: conversation.uuid,
    conversationId: conversation.conversationId,
    filename: options.filename ?? 'call.wav',
    contentType: options.contentType ?? 'audio/wav',
    mediaKind: options.mediaKind ?? 'audio',
  });
}

/** The path and query of an upload URL, for `inject`. */
export function pathOf(url: string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

/** Makes a recording of `seconds` (a tone rising each second, so positions differ) in the file's format. */
export async function makeRecording(path: string, seconds: number, args: string[] = ['-ac', '2']) {
  await ffmpeg([
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=300:beep_factor=2:duration=${seconds}:sample_rate=16000`,
    ...args,
    path,
  ]);
}
