/** The media rules of call/create (spec 4.1, decision 14): which upload a filename and content_type make. */
import { ValidationError } from '../errors.ts';
import {
  AUDIO_FORMATS,
  audioFormatFor,
  audioTypesOf,
  isKnownExtension,
  isVideoOnlyExtension,
  mediaTypeOf,
  OCTET_STREAM,
  UNSUPPORTED_VIDEO_EXTENSIONS,
  VIDEO_CONTAINERS,
  videoContainerFor,
} from './media-types.ts';

/** What the upload will be: the exact type the signed URL pins, and the path it takes. */
export interface MediaPlan {
  filename: string;
  contentType: string;
  mediaKind: 'audio' | 'video';
}

const MAX_FILENAME_BYTES = 255;
const MAX_CONTENT_TYPE_LENGTH = 255;
const TOKEN = "[!#$%&'*+.^_`|~0-9a-z-]+";
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}$`);
// Parameters as RFC 9110 has them (a codecs list may hold commas inside its quotes): an unquoted comma
// makes a list of types, which a browser reads as its last one, so `audio/wav; x=1, text/html` is HTML.
const QUOTED = '"(?:[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\[\\x20-\\x7e])*"';
/** What may follow the media type: `; name=value` parameters, each value a token or a quoted string. */
const PARAMETERS = new RegExp(`^(?:[ \\t]*;[ \\t]*${TOKEN}=(?:${TOKEN}|${QUOTED}))*$`, 'i');

/** The extension of a base name, lower case without the dot; '' when there is none (or a dot file). */
export function extensionOf(filename: string): string {
  const dot = filename.lastIndexOf('.');
  return dot > 0 ? filename.slice(dot + 1).toLowerCase() : '';
}

function checkFilename(filename: string): void {
  // The name is stored and shown, never used as a path (object keys are random), but it must be a base name.
  if (/[/\\]/.test(filename)) throw new ValidationError('must be a base name, without / or \\', 'filename');
  if (/\p{Cc}/u.test(filename)) throw new ValidationError('must not contain control characters', 'filename');
  if (filename === '.' || filename === '..') throw new ValidationError('must name a file', 'filename');
  if (Buffer.byteLength(filename, 'utf8') > MAX_FILENAME_BYTES) {
    throw new ValidationError(`must be at most ${MAX_FILENAME_BYTES} bytes (UTF-8)`, 'filename');
  }
}

/** The media type of a content_type, lower case and without parameters; throws when it is not one. */
function checkedMediaTypeOf(contentType: string): string {
  // It becomes a Content-Type header of the upload, so it must be a clean, single-line header value.
  if (
    contentType.length > MAX_CONTENT_TYPE_LENGTH ||
    !/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(contentType)
  ) {
    throw new ValidationError(
      `must be a media type such as audio/wav: printable ASCII, at most ${MAX_CONTENT_TYPE_LENGTH} characters, ` +
        'no leading or trailing space',
      'content_type',
    );
  }
  const mediaType = mediaTypeOf(contentType);
  if (!MEDIA_TYPE.test(mediaType)) {
    throw new ValidationError(`"${contentType}" is not a media type such as audio/wav`, 'content_type');
  }
  const semicolon = contentType.indexOf(';');
  if (semicolon >= 0 && !PARAMETERS.test(contentType.slice(semicolon))) {
    throw new ValidationError(
      `"${contentType}": parameters must be ; name=value, each value a token or a quoted string`,
      'content_type',
    );
  }
  return mediaType;
}

const videoTypes = () => VIDEO_CONTAINERS.map((c) => c.contentType).join(', ');

function videoPlan(filename: string, ext: string, contentType: string, mediaType: string): MediaPlan {
  const container = videoContainerFor(mediaType);
  if (!container) {
    throw new ValidationError(
      `${mediaType} is not a supported video type; use one of ${videoTypes()}`,
      'content_type',
    );
  }
  if (!container.extensions.includes(ext)) {
    const expected = container.extensions.map((e) => `.${e}`).join(' or ');
    const got = ext ? `.${ext}` : 'no extension';
    throw new ValidationError(
      `${mediaType} needs a filename ending in ${expected}; the filename has ${got}`,
      'content_type',
    );
  }
  return { filename, contentType, mediaKind: 'video' };
}

function audioPlan(filename: string, ext: string, contentType: string, mediaType: string): MediaPlan {
  const format = audioFormatFor(ext);
  if (!format) {
    const got = ext ? `.${ext}, which is not a known audio format` : 'no extension';
    throw new ValidationError(
      `${mediaType} needs a filename with its extension, but the filename has ${got}; ` +
        `omit content_type or send ${OCTET_STREAM}`,
      'content_type',
    );
  }
  if (!audioTypesOf(format).includes(mediaType)) {
    throw new ValidationError(
      `${mediaType} does not match the extension .${ext}; send ${audioTypesOf(format).join(' or ')}`,
      'content_type',
    );
  }
  return { filename, contentType, mediaKind: 'audio' };
}

function impliedPlan(filename: string, ext: string): MediaPlan {
  if (isVideoOnlyExtension(ext)) {
    const container = VIDEO_CONTAINERS.find((c) => c.extensions.includes(ext));
    throw new ValidationError(
      `is required for video: send ${container?.contentType} for a .${ext} file`,
      'content_type',
    );
  }
  const format = audioFormatFor(ext);
  return { filename, contentType: format?.contentType ?? OCTET_STREAM, mediaKind: 'audio' };
}

/** The upload that filename and content_type ask for; undefined without filename. Throws a 422's error. */
export function planMedia(
  filename: string | undefined,
  contentType: string | undefined,
): MediaPlan | undefined {
  if (filename === undefined) {
    if (contentType !== undefined) throw new ValidationError('is sent without filename', 'content_type');
    return undefined;
  }
  checkFilename(filename);
  const ext = extensionOf(filename);
  if (UNSUPPORTED_VIDEO_EXTENSIONS.includes(ext)) {
    throw new ValidationError(
      `.${ext} is not a supported video container; supported: ${VIDEO_CONTAINERS.flatMap((c) => c.extensions.map((e) => `.${e}`)).join(', ')}`,
      'filename',
    );
  }
  if (contentType === undefined) return impliedPlan(filename, ext);
  const mediaType = checkedMediaTypeOf(contentType);
  if (mediaType === OCTET_STREAM) {
    if (isKnownExtension(ext)) {
      const format = audioFormatFor(ext);
      const hint = format ? `send ${format.contentType}, or omit content_type` : 'send its video type';
      throw new ValidationError(
        `${OCTET_STREAM} does not match the extension .${ext}; ${hint}`,
        'content_type',
      );
    }
    return { filename, contentType, mediaKind: 'audio' };
  }
  if (mediaType.startsWith('video/')) return videoPlan(filename, ext, contentType, mediaType);
  if (mediaType.startsWith('audio/')) return audioPlan(filename, ext, contentType, mediaType);
  throw new ValidationError(
    `${mediaType} is not accepted: send an audio/* type (${AUDIO_FORMATS.map((f) => f.contentType)
      .filter((t, i, all) => all.indexOf(t) === i)
      .join(', ')}), a supported video type (${videoTypes()}) or ${OCTET_STREAM}`,
    'content_type',
  );
}
