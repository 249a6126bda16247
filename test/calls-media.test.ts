import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { footprint, NOTHING, post, uploadsOf } from './helpers/calls.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

const CREATE = '/api/v1/call/create';

/** [filename, content_type or undefined, upload_content_type, media kind]: the rules of spec 4.1 and decision 14. */
const ACCEPTED: [string, string | undefined, string, 'audio' | 'video'][] = [
  // The audio path with content_type omitted: the type each extension implies (decision 14's list).
  ['call.wav', undefined, 'audio/wav', 'audio'],
  ['call.mp3', undefined, 'audio/mpeg', 'audio'],
  ['call.m4a', undefined, 'audio/mp4', 'audio'],
  ['call.mp4', undefined, 'audio/mp4', 'audio'],
  ['call.webm', undefined, 'audio/webm', 'audio'],
  ['call.ogg', undefined, 'audio/ogg', 'audio'],
  ['call.flac', undefined, 'audio/flac', 'audio'],
  ['call.aac', undefined, 'audio/aac', 'audio'],
  ['call.opus', undefined, 'audio/opus', 'audio'],
  ['call.amr', undefined, 'audio/amr', 'audio'],
  ['call.3gp', undefined, 'audio/3gpp', 'audio'],
  ['CALL.WAV', undefined, 'audio/wav', 'audio'],
  // Any other extension, or none: application/octet-stream on the audio path.
  ['call.raw', undefined, 'application/octet-stream', 'audio'],
  ['call.pcm', undefined, 'application/octet-stream', 'audio'],
  ['recording', undefined, 'application/octet-stream', 'audio'],
  ['.wav', undefined, 'application/octet-stream', 'audio'],
  ['call.raw', 'application/octet-stream', 'application/octet-stream', 'audio'],
  ['recording', 'application/octet-stream', 'application/octet-stream', 'audio'],
  // Audio with content_type: it must match the extension; it is echoed exactly.
  ['call.wav', 'audio/wav', 'audio/wav', 'audio'],
  ['call.wav', 'audio/x-wav', 'audio/x-wav', 'audio'],
  ['call.mp3', 'audio/mpeg', 'audio/mpeg', 'audio'],
  ['call.m4a', 'audio/mp4', 'audio/mp4', 'audio'],
  ['call.ogg', 'audio/ogg', 'audio/ogg', 'audio'],
  // Ambiguous containers.
  ['call.mp4', 'audio/mp4', 'audio/mp4', 'audio'],
  ['call.mp4', 'video/mp4', 'video/mp4', 'video'],
  ['call.webm', 'audio/webm', 'audio/webm', 'audio'],
  ['call.webm', 'video/webm', 'video/webm', 'video'],
  ['call.3gp', 'audio/3gpp', 'audio/3gpp', 'audio'],
  // Every container of the spec's video table.
  ['call.3gp', 'video/3gpp', 'video/3gpp', 'video'],
  ['call.3gpp', 'video/3gpp', 'video/3gpp', 'video'],
  ['call.flv', 'video/x-flv', 'video/x-flv', 'video'],
  ['call.mov', 'video/quicktime', 'video/quicktime', 'video'],
  ['call.mpeg', 'video/mpeg', 'video/mpeg', 'video'],
  ['call.mpg', 'video/mpeg', 'video/mpeg', 'video'],
  ['call.wmv', 'video/x-ms-wmv', 'video/x-ms-wmv', 'video'],
  // Case-insensitive media type; parameters ignored for validation, echoed exactly.
  ['call.wav', 'Audio/WAV', 'Audio/WAV', 'audio'],
  ['CALL.MOV', 'VIDEO/QuickTime', 'VIDEO/QuickTime', 'video'],
  ['call.wav', 'audio/wav; codecs=1', 'audio/wav; codecs=1', 'audio'],
  [
    'call.mp4',
    'video/mp4;codecs="avc1.42E01E, mp4a.40.2"',
    'video/mp4;codecs="avc1.42E01E, mp4a.40.2"',
    'video',
  ],
  ['call.raw', 'Application/Octet-Stream; x=y', 'Application/Octet-Stream; x=y', 'audio'],
  // Names that are odd but safe base names.
  ['..call.wav', undefined, 'audio/wav', 'audio'],
  ['appel téléphonique.wav', undefined, 'audio/wav', 'audio'],
  [`${'é'.repeat(125)}.wav`, undefined, 'audio/wav', 'audio'],
];

/** [filename or undefined, content_type or undefined, message pattern]: every one is a 422 that records nothing. */
const REFUSED: [string | undefined, string | undefined, RegExp][] = [
  // Video containers outside the table, with or without content_type.
  ['call.mkv', undefined, /^filename: \.mkv is not a supported video container/],
  ['call.mkv', 'video/x-matroska', /^filename: \.mkv is not a supported/],
  ['call.mkv', 'application/octet-stream', /^filename: \.mkv is not a supported/],
  ['call.MKV', 'video/mp4', /^filename: \.mkv is not a supported/],
  ['call.avi', undefined, /^filename: \.avi is not a supported/],
  ['call.avi', 'video/x-msvideo', /^filename: \.avi is not a supported/],
  ['call.m4v', 'video/mp4', /^filename: \.m4v is not a supported/],
  ['call.ogv', 'video/ogg', /^filename: \.ogv is not a supported/],
  ['call.ts', 'video/mp2t', /^filename: \.ts is not a supported/],
  ['call.vob', undefined, /^filename: \.vob is not a supported/],
  // No extension: only the audio path without content_type or with application/octet-stream.
  [
    'recording',
    'video/mp4',
    /^content_type: video\/mp4 needs a filename ending in \.mp4; the filename has no extension$/,
  ],
  ['recording', 'audio/wav', /^content_type: audio\/wav needs a filename with its extension/],
  // Video-only extensions need content_type.
  ['call.mov', undefined, /^content_type: is required for video: send video\/quicktime/],
  ['call.flv', undefined, /^content_type: is required for video/],
  ['call.wmv', undefined, /^content_type: is required for video/],
  ['call.mpeg', undefined, /^content_type: is required for video/],
  ['call.mpg', undefined, /^content_type: is required for video/],
  ['call.3gpp', undefined, /^content_type: is required for video/],
  // Video needs a supported video/* type, and its extension.
  ['call.mp4', 'video/x-matroska', /^content_type: video\/x-matroska is not a supported video type/],
  ['call.mp4', 'video/avi', /^content_type: video\/avi is not a supported video type/],
  [
    'call.mov',
    'video/mp4',
    /^content_type: video\/mp4 needs a filename ending in \.mp4; the filename has \.mov$/,
  ],
  ['call.mp4', 'video/quicktime', /^content_type: video\/quicktime needs a filename ending in \.mov/],
  ['call.wav', 'video/mp4', /^content_type: video\/mp4 needs/],
  ['call.m4a', 'video/mp4', /^content_type: video\/mp4 needs/],
  ['call.mpg', 'video/3gpp', /^content_type: video\/3gpp needs a filename ending in \.3gp or \.3gpp/],
  // Audio: the extension must match the type.
  ['call.wav', 'audio/mpeg', /^content_type: audio\/mpeg does not match the extension \.wav/],
  ['call.mp3', 'audio/wav', /^content_type: audio\/wav does not match the extension \.mp3/],
  ['call.mov', 'audio/mp4', /^content_type: audio\/mp4 needs a filename with its extension/],
  ['call.3gpp', 'audio/3gpp', /^content_type: audio\/3gpp needs a filename with its extension/],
  ['call.raw', 'audio/wav', /^content_type: audio\/wav needs a filename with its extension/],
  // application/octet-stream with a known extension.
  [
    'call.wav',
    'application/octet-stream',
    /^content_type: application\/octet-stream does not match the extension \.wav/,
  ],
  ['call.mp4', 'application/octet-stream', /^content_type: application\/octet-stream does not match/],
  ['call.mov', 'application/octet-stream', /^content_type: application\/octet-stream does not match/],
  // Types that are neither audio, supported video, nor application/octet-stream.
  ['call.wav', 'text/plain', /^content_type: text\/plain is not accepted/],
  ['call.png', 'image/png', /^content_type: image\/png is not accepted/],
  // content_type that is not a media type or not a clean header value.
  ['call.wav', 'wav', /^content_type: "wav" is not a media type/],
  ['call.wav', 'audio/', /^content_type: /],
  ['call.wav', ' audio/wav', /^content_type: /],
  ['call.wav', 'audio/wav\r\nx-evil: 1', /^content_type: /],
  ['call.wav', 'audio/wav; name=é', /^content_type: /],
  // A list, which a browser reads as its last type: HTML on the service's origin.
  ['call.wav', 'audio/wav; x=1, text/html', /^content_type: .*parameters must be ; name=value/],
  ['call.wav', 'audio/wav; x="1", text/html', /^content_type: .*parameters must be ; name=value/],
  ['call.wav', 'audio/wav; x', /^content_type: .*parameters must be ; name=value/],
  ['call.wav', '', /^content_type: /],
  // content_type without filename.
  [undefined, 'audio/wav', /^content_type: is sent without filename$/],
  // File names that are not safe base names.
  ['calls/call.wav', undefined, /^filename: must be a base name/],
  ['..\\call.wav', undefined, /^filename: must be a base name/],
  ['/etc/passwd', undefined, /^filename: must be a base name/],
  ['call\u0000.wav', undefined, /^filename: must not contain control characters$/],
  ['call\n.wav', undefined, /^filename: must not contain control characters$/],
  ['call\u0085.wav', undefined, /^filename: must not contain control characters$/],
  ['.', undefined, /^filename: must name a file$/],
  ['..', undefined, /^filename: must name a file$/],
  [`${'é'.repeat(126)}.wav`, undefined, /^filename: must be at most 255 bytes/],
  ['', undefined, /^filename: /],
];

for (const backend of BACKENDS) {
  describe(`call/create media rules (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    for (const [filename, contentType, expected, kind] of ACCEPTED) {
      it(`accepts ${JSON.stringify(filename)} with ${contentType ?? 'no content_type'}: ${expected} (${kind})`, async () => {
        const c = await h.company();
        const res = await post(h, c, '/api/v1/call/create', {
          agent_email: c.agent.email,
          product_id: c.productId,
          conversation_id: 'media',
          filename,
          ...(contentType === undefined ? {} : { content_type: contentType }),
        });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().upload_content_type, expected);
        const [upload] = await uploadsOf(h, c);
        assert.equal(upload?.contentType, expected);
        assert.equal(upload?.mediaKind, kind);
        assert.equal(upload?.filename, filename);
        assert.equal(
          new URL(res.json().upload_url).searchParams.get('X-Cqs-Content-Type') ?? expected,
          expected,
        );
      });
    }

    for (const [filename, contentType, message] of REFUSED) {
      it(`refuses ${JSON.stringify(filename)} with ${JSON.stringify(contentType)}`, async () => {
        const c = await h.company();
        const res = await post(h, c, CREATE, {
          agent_email: c.agent.email,
          product_id: c.productId,
          conversation_id: 'media',
          ...(filename === undefined ? {} : { filename }),
          ...(contentType === undefined ? {} : { content_type: contentType }),
          transcript: [{ role: 'agent', text: 'hi', start: 0, stop: 1 }],
        });
        assert.equal(res.statusCode, 422, res.body);
        assert.match(res.json().error, message);
        assert.deepEqual(await footprint(h, c), NOTHING);
      });
    }

    it('checks media before the agent, so a bad file name with an unknown agent is still a 422', async () => {
      const c = await h.company();
      const res = await post(h, c, CREATE, {
        agent_email: 'nobody@example.test',
        product_id: c.productId,
        filename: 'call.mkv',
      });
      assert.equal(res.statusCode, 422);
    });
  });
}
