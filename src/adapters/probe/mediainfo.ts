/**
 * Probing media with mediainfo.js (MediaInfoLib in WebAssembly: `npm install` brings it, no system package
 * needed). The object is read in chunks through its reader, so only the parts MediaInfoLib asks for are
 * read (a ranged GET each on S3). The container is told from the bytes, never from a name.
 */
import type { MediaInfo, MediaInfoResult, Track } from 'mediainfo.js';
import type { ObjectReader } from '../storage/storage.ts';

/** An audio stream found in the object. */
export interface AudioStream {
  /** The codec as MediaInfo names it: AAC, PCM, MPEG Audio, Opus, Vorbis, FLAC, WMA, … */
  codec: string | undefined;
  channels: number | undefined;
  sampleRate: number | undefined;
}

/** A video stream found in the object. */
export interface VideoStream {
  /** The codec as MediaInfo names it: AVC, HEVC, VP8, MPEG-4 Visual, MPEG Video, WMV2, … */
  codec: string | undefined;
  width: number | undefined;
  height: number | undefined;
}

/** What the probe found. */
export interface ProbeResult {
  /**
   * The container told from the bytes: mp4, mov, 3gp, webm, mkv, flv, mpeg (program stream), mpeg-ts,
   * asf (wmv/wma), avi, wav, mp3, mpeg-audio, ogg, flac, aac, amr, …; undefined when unrecognised.
   */
  container: string | undefined;
  /** MediaInfo's own name of the format (MPEG-4, WebM, Wave, …). */
  format: string | undefined;
  durationSeconds: number | undefined;
  audio: AudioStream[];
  video: VideoStream[];
  /** Image tracks (a picture is not media for this service). */
  images: number;
}

/** MediaInfoLib failed on the bytes themselves (not on reading them). */
export class ProbeFailedError extends Error {
  override name = 'ProbeFailedError';
}

/** Probes objects. One probe at a time per prober: MediaInfoLib keeps state per instance. */
export interface MediaProber {
  probe(reader: ObjectReader): Promise<ProbeResult>;
  close(): void;
}

const MEDIAINFO_NAMES: Record<string, string> = {
  WebM: 'webm',
  Matroska: 'mkv',
  'Flash Video': 'flv',
  'MPEG-PS': 'mpeg',
  'MPEG-TS': 'mpeg-ts',
  'Windows Media': 'asf',
  AVI: 'avi',
  Wave: 'wav',
  Wave64: 'wav',
  RF64: 'wav',
  Ogg: 'ogg',
  FLAC: 'flac',
  ADTS: 'aac',
  ADIF: 'aac',
  AMR: 'amr',
  AIFF: 'aiff',
  QuickTime: 'mov',
  'AC-3': 'ac3',
};

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function number(value: unknown): number | undefined {
  const n =
    typeof value === 'number' ? value : typeof value === 'string' ? Number.parseFloat(value) : Number.NaN;
  return Number.isFinite(n) ? n : undefined;
}

/** The container of an ISO base media file (mp4, mov, 3gp) from its brands, as MediaInfo reports them. */
function isoContainer(general: Record<string, unknown>): string {
  const brand = (text(general.CodecID) ?? '').toLowerCase();
  const profile = text(general.Format_Profile) ?? '';
  if (brand === 'qt' || profile === 'QuickTime') return 'mov';
  if (brand.startsWith('3gp') || brand.startsWith('3g2') || profile.startsWith('3GPP')) return '3gp';
  return 'mp4';
}

/** Names the container from the General track (and, for MPEG audio, the layer of its audio). */
export function containerOf(
  general: Record<string, unknown>,
  firstAudio: Record<string, unknown> | undefined,
) {
  const format = text(general.Format);
  if (!format) return undefined;
  if (format === 'MPEG-4') return isoContainer(general);
  if (format === 'MPEG Audio') return text(firstAudio?.Format_Profile) === 'Layer 3' ? 'mp3' : 'mpeg-audio';
  return MEDIAINFO_NAMES[format] ?? format.toLowerCase().replace(/\s+/g, '-');
}

/**
 * The duration MediaInfo reports, but never longer than the bytes can hold when the audio is PCM. A
 * WAV written as a stream (ffmpeg to a pipe) has 0xFFFFFFFF for its sizes, and MediaInfo, given the whole
 * file in one read, took them at their word: 288,230,376,151,711 s for a 10 s call. Each second of PCM
 * takes BitRate/8 bytes of the file, so the file's size bounds it whatever the header says.
 */
function durationOf(
  general: Record<string, unknown>,
  audioTracks: Record<string, unknown>[],
  videoTracks: Record<string, unknown>[],
): number | undefined {
  // Some containers (raw ADTS, for one) give no duration without reading everything: null then.
  const claimed =
    number(general.Duration) ??
    [...audioTracks, ...videoTracks].map((t) => number(t.Duration)).find((d) => d !== undefined);
  const fileSize = number(general.FileSize);
  const audio = audioTracks[0];
  // PCM only: its bit rate is exact (rate × channels × depth), where a compressed stream's is a header's.
  const bitRate = text(audio?.Format) === 'PCM' ? number(audio?.BitRate) : undefined;
  if (claimed === undefined || fileSize === undefined || !bitRate) return claimed;
  return Math.min(claimed, (fileSize * 8) / bitRate);
}

/** Turns MediaInfo's tracks into a ProbeResult. */
export function summarize(result: MediaInfoResult): ProbeResult {
  const tracks = (result.media?.track ?? []) as (Track & Record<string, unknown>)[];
  const general = tracks.find((t) => t['@type'] === 'General') ?? {};
  const audioTracks = tracks.filter((t) => t['@type'] === 'Audio');
  const videoTracks = tracks.filter((t) => t['@type'] === 'Video');
  return {
    container: containerOf(general, audioTracks[0]),
    format: text((general as Record<string, unknown>).Format),
    durationSeconds: durationOf(general, audioTracks, videoTracks),
    audio: audioTracks.map((t) => ({
      codec: text(t.Format),
      channels: number(t.Channels),
      sampleRate: number(t.SamplingRate),
    })),
    video: videoTracks.map((t) => ({
      codec: text(t.Format),
      width: number(t.Width),
      height: number(t.Height),
    })),
    images: tracks.filter((t) => t['@type'] === 'Image').length,
  };
}

/** Makes a prober; the WebAssembly instance is made on first use and kept. */
export function createMediaInfoProber(options: { chunkSize?: number; timeoutMs?: number } = {}): MediaProber {
  const chunkSize = options.chunkSize ?? 1024 * 1024;
  const timeoutMs = options.timeoutMs ?? 120_000;
  let instance: Promise<MediaInfo<'object'>> | undefined;
  // Probes queue behind each other: one MediaInfoLib instance parses one file at a time.
  let tail: Promise<unknown> = Promise.resolve();

  async function probeOnce(reader: ObjectReader): Promise<ProbeResult> {
    // Imported here, not at the top: a process whose worker never probes never loads MediaInfoLib.
    instance ??= import('mediainfo.js').then((m) => m.default({ format: 'object', chunkSize }));
    const mediainfo = await instance;
    const deadline = Date.now() + timeoutMs;
    let readError: unknown;
    const readChunk = async (size: number, offset: number) => {
      try {
        if (Date.now() > deadline) throw new Error(`probe took longer than ${timeoutMs} ms`);
        return await reader.read(offset, size);
      } catch (error) {
        readError = error;
        throw error;
      }
    };
    try {
      return summarize(await mediainfo.analyzeData(reader.size, readChunk));
    } catch (error) {
      if (readError !== undefined) throw readError;
      // A fresh instance for the next probe: this one may be in a bad state.
      instance = undefined;
      mediainfo.close();
      throw new ProbeFailedError(`MediaInfo could not parse the object: ${(error as Error).message}`);
    }
  }

  return {
    probe(reader) {
      const run = tail.then(() => probeOnce(reader));
      tail = run.catch(() => {});
      return run;
    },
    close() {
      const current = instance;
      instance = undefined;
      void current?.then((m) => m.close()).catch(() => {});
    },
  };
}
