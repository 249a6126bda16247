/**
 * The one table of media types (spec 4.1, decision 14). Validation (`media.ts`) and the OpenAPI description
 * of call/create are both built from it, so the documentation cannot drift from the rules.
 */

/** A format of the audio path: the extension, the type implied when content_type is omitted, and aliases. */
export interface AudioFormat {
  extension: string;
  /** The upload_content_type when content_type is omitted (decision 14). */
  contentType: string;
  /** Other spellings browsers and recorders send for the same format; accepted when sent. */
  aliases: readonly string[];
}

/**
 * A supported video container (the spec's table): its extensions, its one content_type, and the container
 * verification must find in the bytes (as the probe names it, `adapters/probe/mediainfo.ts`).
 */
export interface VideoContainer {
  extensions: readonly string[];
  contentType: string;
  probedAs: string;
}

/** The audio formats whose extension implies a type (decision 14's list), in that order. */
export const AUDIO_FORMATS: readonly AudioFormat[] = [
  { extension: 'wav', contentType: 'audio/wav', aliases: ['audio/x-wav', 'audio/wave', 'audio/vnd.wave'] },
  { extension: 'mp3', contentType: 'audio/mpeg', aliases: ['audio/mp3'] },
  { extension: 'm4a', contentType: 'audio/mp4', aliases: ['audio/x-m4a'] },
  { extension: 'mp4', contentType: 'audio/mp4', aliases: [] },
  { extension: 'webm', contentType: 'audio/webm', aliases: [] },
  { extension: 'ogg', contentType: 'audio/ogg', aliases: [] },
  { extension: 'flac', contentType: 'audio/flac', aliases: ['audio/x-flac'] },
  { extension: 'aac', contentType: 'audio/aac', aliases: [] },
  // Opus files are Ogg streams, and RFC 7845 names audio/ogg for them.
  { extension: 'opus', contentType: 'audio/opus', aliases: ['audio/ogg'] },
  { extension: 'amr', contentType: 'audio/amr', aliases: [] },
  { extension: '3gp', contentType: 'audio/3gpp', aliases: [] },
];

/** The supported video containers, exactly the spec's table. */
export const VIDEO_CONTAINERS: readonly VideoContainer[] = [
  { extensions: ['3gp', '3gpp'], contentType: 'video/3gpp', probedAs: '3gp' },
  { extensions: ['flv'], contentType: 'video/x-flv', probedAs: 'flv' },
  { extensions: ['mov'], contentType: 'video/quicktime', probedAs: 'mov' },
  { extensions: ['mp4'], contentType: 'video/mp4', probedAs: 'mp4' },
  { extensions: ['mpeg', 'mpg'], contentType: 'video/mpeg', probedAs: 'mpeg' },
  { extensions: ['webm'], contentType: 'video/webm', probedAs: 'webm' },
  { extensions: ['wmv'], contentType: 'video/x-ms-wmv', probedAs: 'asf' },
];

/** Extensions of video containers outside the spec's table: 422 whatever content_type says. */
export const UNSUPPORTED_VIDEO_EXTENSIONS: readonly string[] = [
  'mkv',
  'mk3d',
  'avi',
  'm4v',
  'ogv',
  'ts',
  'mts',
  'm2ts',
  'vob',
  'asf',
  'rm',
  'rmvb',
  'divx',
  'f4v',
  'mxf',
  'm2v',
  '3g2',
  'qt',
  'dv',
];

/** The type that lets a file of unknown format take the audio path. */
export const OCTET_STREAM = 'application/octet-stream';

/** The media type of a Content-Type, lower case and without parameters (decision 14). */
export function mediaTypeOf(contentType: string): string {
  return (contentType.split(';', 1)[0] ?? '').trim().toLowerCase();
}

/** The audio format of an extension (lower case, no dot), if it names one. */
export function audioFormatFor(extension: string): AudioFormat | undefined {
  return AUDIO_FORMATS.find((f) => f.extension === extension);
}

/** The video container with this media type (lower case, no parameters), if it is supported. */
export function videoContainerFor(mediaType: string): VideoContainer | undefined {
  return VIDEO_CONTAINERS.find((c) => c.contentType === mediaType);
}

/** True when the extension belongs to a supported video container only, with no audio reading. */
export function isVideoOnlyExtension(extension: string): boolean {
  return (
    audioFormatFor(extension) === undefined && VIDEO_CONTAINERS.some((c) => c.extensions.includes(extension))
  );
}

/** True when the extension names any format this table knows (audio or video, supported or not). */
export function isKnownExtension(extension: string): boolean {
  return (
    audioFormatFor(extension) !== undefined ||
    VIDEO_CONTAINERS.some((c) => c.extensions.includes(extension)) ||
    UNSUPPORTED_VIDEO_EXTENSIONS.includes(extension)
  );
}

/** The media types accepted with content_type for an audio format, canonical first. */
export function audioTypesOf(format: AudioFormat): string[] {
  return [format.contentType, ...format.aliases];
}
