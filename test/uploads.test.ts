import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { and, eq, sql } from 'drizzle-orm';
import { uploads as uploadsTable } from '../src/adapters/db/schema.ts';
import { analysisOf } from '../src/domain/analysis/analysis.ts';
import { sweepUploads } from '../src/domain/uploads/sweep.ts';
import type { UploadUrlResponse } from '../src/domain/uploads/uploads.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { issueTestUpload, makeTestMedia, pathOf, SAMPLES, type TestMedia } from './helpers/media.ts';

/** The Content-Type of each sample as a client would send it (spec 4.1's table, decision 14). */
const TYPES: Record<string, { contentType: string; mediaKind: 'audio' | 'video' }> = {
  'stereo.wav': { contentType: 'audio/wav', mediaKind: 'audio' },
  'mono.wav': { contentType: 'audio/wav', mediaKind: 'audio' },
  'stereo.mp3': { contentType: 'audio/mpeg', mediaKind: 'audio' },
  'mono.mp3': { contentType: 'audio/mpeg', mediaKind: 'audio' },
  'stereo.m4a': { contentType: 'audio/mp4', mediaKind: 'audio' },
  'audio.mp4': { contentType: 'audio/mp4', mediaKind: 'audio' },
  'audio.webm': { contentType: 'audio/webm', mediaKind: 'audio' },
  'stereo.ogg': { contentType: 'audio/ogg', mediaKind: 'audio' },
  'stereo.flac': { contentType: 'audio/flac', mediaKind: 'audio' },
  'audio.aac': { contentType: 'audio/aac', mediaKind: 'audio' },
  'video.3gp': { contentType: 'video/3gpp', mediaKind: 'video' },
  'video.flv': { contentType: 'video/x-flv', mediaKind: 'video' },
  'video.mov': { contentType: 'video/quicktime', mediaKind: 'video' },
  'video.mp4': { contentType: 'video/mp4', mediaKind: 'video' },
  'video.mpeg': { contentType: 'video/mpeg', mediaKind: 'video' },
  'video.webm': { contentType: 'video/webm', mediaKind: 'video' },
  'video.wmv': { contentType: 'video/x-ms-wmv', mediaKind: 'video' },
};

for (const backend of BACKENDS) {
  describe(`uploads and their verification (${backend})`, () => {
    let h: Harness;
    let media: TestMedia;
    before(async () => {
      [h, media] = await Promise.all([startHarness(backend), makeTestMedia()]);
    });
    after(async () => {
      await h.close();
      await media.remove();
    });

    async function put(upload: UploadUrlResponse, file: string, contentType = upload.upload_content_type) {
      return h.app.inject({
        method: 'PUT',
        url: pathOf(upload.upload_url),
        headers: { 'content-type': contentType },
        payload: await readFile(media.path(file)),
      });
    }

    async function show(c: TestCompany, uploadId: number) {
      const res = await h.request({ method: 'GET', url: `/api/v1/upload/${uploadId}`, key: c.key });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    }

    /** Issues, uploads and verifies one file; returns the upload as GET shows it. */
    async function verify(
      c: TestCompany,
      file: string,
      options: {
        contentType?: string;
        mediaKind?: 'audio' | 'video';
        separation?: 'diarize' | 'channels';
      } = {},
    ) {
      const upload = await issueTestUpload(h, c, {
        filename: file,
        contentType: options.contentType ?? TYPES[file]?.contentType ?? 'application/octet-stream',
        mediaKind: options.mediaKind ?? TYPES[file]?.mediaKind ?? 'audio',
        ...(options.separation ? { separation: options.separation } : {}),
      });
      const res = await put(upload, file);
      assert.equal(res.statusCode, 200, res.body);
      await h.runJobs();
      return show(c, upload.upload_id);
    }

    it('verifies every container of the spec, video and audio-only, and records what it found', async () => {
      const c = await h.company();
      const files = Object.keys(TYPES);
      const uploads = new Map<string, UploadUrlResponse>();
      for (const file of files) {
        const upload = await issueTestUpload(h, c, { filename: file, ...TYPES[file] });
        assert.equal((await put(upload, file)).statusCode, 200);
        uploads.set(file, upload);
      }
      // A verification per file, then the analysis of each ready recording (issue 14).
      assert.equal(await h.runJobs(), files.length * 2);
      for (const file of files) {
        const sample = SAMPLES.find((s) => s.name === file);
        const body = await show(c, uploads.get(file)?.upload_id ?? 0);
        assert.equal(body.status, 'ready', `${file}: ${body.reason}`);
        assert.equal(body.reason, null);
        assert.equal(body.media.container, sample?.container, file);
        assert.equal(body.media.has_video, sample?.video, file);
        assert.equal(body.media.has_audio, true, file);
        assert.equal(body.media.audio_channels, sample?.channels, file);
        // Raw AAC (ADTS) has no duration without reading the whole stream; MediaInfo reports none.
        if (file === 'audio.aac') assert.equal(body.media.duration_seconds, null);
        else
          assert.ok(
            Math.abs(body.media.duration_seconds - 1) < 0.3,
            `${file}: ${body.media.duration_seconds}`,
          );
        assert.equal(typeof body.media.audio_codec, 'string');
        if (sample?.video) assert.equal(typeof body.media.video_codec, 'string');
        else assert.equal(body.media.video_codec, null);
        assert.ok(body.size > 0);
        const [row] = await h.services.database.db
          .select({ conversationUuid: uploadsTable.conversationUuid })
          .from(uploadsTable)
          .where(and(eq(uploadsTable.companyId, c.id), eq(uploadsTable.id, body.upload_id)));
        const analysis = await analysisOf(h.services.database.db, c.id, row?.conversationUuid ?? '');
        assert.equal(analysis?.status, 'ready', `${file} decodes: ${analysis?.reason}`);
        assert.ok(Math.abs((analysis?.duration_s ?? 0) - 1) < 0.3, `${file}: ${analysis?.duration_s}`);
      }
    });

    it('gives a WAV written as a stream, its sizes unknown, the duration its bytes hold', async () => {
      // ffmpeg writing to a pipe cannot go back to fill in the sizes: 0xFFFFFFFF, which MediaInfo took
      // for 288,230,376,151,711 s.
      const streamed = execFileSync('ffmpeg', [
        '-v',
        'error',
        '-i',
        media.path('stereo.wav'),
        '-f',
        'wav',
        'pipe:1',
      ]);
      assert.equal(streamed.readUInt32LE(4), 0xffffffff, 'the RIFF size is unknown');
      await writeFile(media.path('streamed.wav'), streamed);
      const body = await verify(await h.company(), 'streamed.wav', { contentType: 'audio/wav' });
      assert.equal(body.status, 'ready', body.reason);
      assert.ok(Math.abs(body.media.duration_seconds - 1) < 0.05, String(body.media.duration_seconds));
    });

    it('shows pending, then uploaded with its size, then ready', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c);
      const pending = await show(c, upload.upload_id);
      assert.deepEqual(
        { status: pending.status, size: pending.size, media: pending.media, reason: pending.reason },
        { status: 'pending', size: null, media: null, reason: null },
      );
      assert.equal(pending.conversation_id, upload.conversation_id);
      assert.equal(pending.content_type, 'audio/wav');
      assert.equal(pending.filename, 'call.wav');
      assert.equal((await put(upload, 'stereo.wav')).statusCode, 200);
      const uploaded = await show(c, upload.upload_id);
      assert.equal(uploaded.status, 'uploaded');
      assert.equal(uploaded.size, (await readFile(media.path('stereo.wav'))).length);
      assert.equal(uploaded.media, null);
      await h.runJobs();
      assert.equal((await show(c, upload.upload_id)).status, 'ready');
      assert.deepEqual(Object.keys(await show(c, upload.upload_id)).sort(), [
        'content_type',
        'conversation_id',
        'created_at',
        'expires_at',
        'filename',
        'media',
        'reason',
        'size',
        'status',
        'updated_at',
        'upload_id',
      ]);
    });

    it('needs two channels when the call separates speakers by channels', async () => {
      const c = await h.company();
      const stereo = await verify(c, 'stereo.wav', { separation: 'channels' });
      assert.equal(stereo.status, 'ready');
      const mono = await verify(c, 'mono.mp3', { separation: 'channels' });
      assert.equal(mono.status, 'rejected');
      assert.match(mono.reason, /channels.*1 channel/);
      assert.equal(mono.media.audio_channels, 1);
      const monoVideo = await verify(c, 'video.3gp', { separation: 'channels' });
      assert.equal(monoVideo.status, 'rejected');
      const diarized = await verify(c, 'mono.wav');
      assert.equal(diarized.status, 'ready');
    });

    it('rejects bytes that are not media, whatever the name and type say', async () => {
      const c = await h.company();
      for (const [file, contentType] of [
        ['random.bin', 'application/octet-stream'],
        ['text.txt', 'audio/wav'],
        ['picture.png', 'video/mp4'],
      ] as const) {
        const body = await verify(c, file, {
          contentType,
          mediaKind: contentType.startsWith('video') ? 'video' : 'audio',
        });
        assert.equal(body.status, 'rejected', file);
        assert.match(body.reason, /not a media file/, file);
        assert.equal(body.media, null);
      }
    });

    it('rejects a video whose bytes are not the container its type declares', async () => {
      const c = await h.company();
      const cases = [
        ['video.mp4', 'video/quicktime', 'mov', 'mp4'],
        ['video.mov', 'video/mp4', 'mp4', 'mov'],
        ['video.mkv', 'video/webm', 'webm', 'mkv'],
        ['video.webm', 'video/x-flv', 'flv', 'webm'],
        ['stereo.wav', 'video/mp4', 'mp4', 'wav'],
      ] as const;
      for (const [file, contentType, expected, actual] of cases) {
        const body = await verify(c, file, { contentType, mediaKind: 'video' });
        assert.equal(body.status, 'rejected', file);
        assert.equal(body.reason, `declared ${contentType} (${expected}) but the file is ${actual}`);
        assert.equal(body.media.container, actual);
      }
      // Parameters and case of the declared type do not matter (decision 14).
      const body = await verify(c, 'video.mp4', {
        contentType: 'Video/MP4; codecs="avc1"',
        mediaKind: 'video',
      });
      assert.equal(body.status, 'ready');
    });

    it('detects the format on the audio path, and refuses an "audio" file with no audio', async () => {
      const c = await h.company();
      const detected = await verify(c, 'stereo.mp3', { contentType: 'application/octet-stream' });
      assert.equal(detected.status, 'ready');
      assert.equal(detected.media.container, 'mp3');
      const mislabelled = await verify(c, 'stereo.flac', { contentType: 'audio/wav' });
      assert.equal(mislabelled.status, 'ready');
      assert.equal(mislabelled.media.container, 'flac');
      const silent = await verify(c, 'silent.mp4', { contentType: 'audio/mp4' });
      assert.equal(silent.status, 'rejected');
      assert.match(silent.reason, /no audio stream/);
      // On the video path a video without sound is still a video of the declared container.
      const silentVideo = await verify(c, 'silent.mp4', { contentType: 'video/mp4', mediaKind: 'video' });
      assert.equal(silentVideo.status, 'ready');
      assert.equal(silentVideo.media.has_audio, false);
      assert.equal(silentVideo.media.audio_channels, null);
    });

    it('verifies again when the client uploads again to a URL that is still valid', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c, { separation: 'channels' });
      assert.equal((await put(upload, 'mono.wav')).statusCode, 200);
      await h.runJobs();
      assert.equal((await show(c, upload.upload_id)).status, 'rejected');
      assert.equal((await put(upload, 'stereo.wav')).statusCode, 200);
      const again = await show(c, upload.upload_id);
      assert.equal(again.status, 'uploaded');
      assert.equal(again.reason, null);
      await h.runJobs();
      const ready = await show(c, upload.upload_id);
      assert.equal(ready.status, 'ready');
      assert.equal(ready.media.audio_channels, 2);
    });

    it('expires an upload whose URL expired with nothing uploaded, after the grace period', async () => {
      const c = await h.company();
      const unused = await issueTestUpload(h, c, { expiresIn: 1 });
      const used = await issueTestUpload(h, c, { expiresIn: 1 });
      const fresh = await issueTestUpload(h, c, { expiresIn: 3600 });
      assert.equal((await put(used, 'stereo.wav')).statusCode, 200);
      const deps = { db: h.services.database.db, storage: h.services.storage, queue: h.services.queue };
      const inGrace = await sweepUploads(deps, {
        expiryGraceSeconds: 600,
        now: new Date(Date.now() + 60_000),
      });
      assert.equal(inGrace.expired, 0);
      assert.equal((await show(c, unused.upload_id)).status, 'pending');
      const report = await sweepUploads(deps, {
        expiryGraceSeconds: 600,
        now: new Date(Date.now() + 700_000),
      });
      assert.ok(report.expired >= 1);
      const expired = await show(c, unused.upload_id);
      assert.equal(expired.status, 'expired');
      assert.equal(expired.reason, 'the upload URL expired with nothing uploaded');
      assert.equal((await show(c, used.upload_id)).status, 'uploaded');
      assert.equal((await show(c, fresh.upload_id)).status, 'pending');
    });

    it('finds an object the database did not record (a crash after the rename) and verifies it', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c);
      assert.equal((await put(upload, 'stereo.wav')).statusCode, 200);
      // As if the process died between writing the file and updating the row.
      await h.services.database.db.execute(
        sql`update uploads set status = 'pending', size = null where id = ${upload.upload_id}`,
      );
      await h.runJobs();
      assert.equal((await show(c, upload.upload_id)).status, 'pending');
      const deps = { db: h.services.database.db, storage: h.services.storage, queue: h.services.queue };
      const report = await sweepUploads(deps, { expiryGraceSeconds: 600 });
      assert.ok(report.uploaded >= 1);
      await h.runJobs();
      assert.equal((await show(c, upload.upload_id)).status, 'ready');
    });

    it('queues again a verification whose job died, once the upload has been quiet long enough', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c);
      assert.equal((await put(upload, 'stereo.wav')).statusCode, 200);
      // As if the verify job had failed its last attempt: dead, kept with its error, key freed.
      await h.services.database.db.execute(
        sql`update jobs set attempts = max_attempts, dedupe_key = null, last_error = 'gave up'
          where kind = 'upload.verify' and company_id = ${c.id}`,
      );
      assert.equal(await h.runJobs(), 0);
      const deps = { db: h.services.database.db, storage: h.services.storage, queue: h.services.queue };
      const recent = await sweepUploads(deps, { expiryGraceSeconds: 600 });
      assert.equal(recent.requeued, 0, 'a job was made within the quiet period');
      await sleep(20);
      const quiet = await sweepUploads(deps, { expiryGraceSeconds: 600, verifyQuietSeconds: 0.01 });
      assert.ok(quiet.requeued >= 1);
      await h.runJobs();
      assert.equal((await show(c, upload.upload_id)).status, 'ready');
    });

    it('answers 404 for an upload of another company or none, 422 for an id that is not an integer', async () => {
      const a = await h.company();
      const b = await h.company();
      const upload = await issueTestUpload(h, a);
      const other = await h.request({ method: 'GET', url: `/api/v1/upload/${upload.upload_id}`, key: b.key });
      assert.equal(other.statusCode, 404);
      assert.deepEqual(other.json(), { error: `upload ${upload.upload_id} not found` });
      const none = await h.request({ method: 'GET', url: '/api/v1/upload/999999999', key: a.key });
      assert.equal(none.statusCode, 404);
      for (const bad of ['abc', '1.5', '0', '-1', '99999999999999999999']) {
        const res = await h.request({ method: 'GET', url: `/api/v1/upload/${bad}`, key: a.key });
        assert.equal(res.statusCode, 422, bad);
        assert.match(res.json().error, /upload_id/);
      }
    });

    it('needs a key with the calls scope', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c);
      const url = `/api/v1/upload/${upload.upload_id}`;
      assert.equal((await h.request({ method: 'GET', url })).statusCode, 401);
      assert.equal((await h.request({ method: 'GET', url, key: c.writerKey })).statusCode, 403);
      assert.equal((await h.request({ method: 'GET', url, key: c.agentKey })).statusCode, 200);
    });

    it('is in the OpenAPI document, with examples and every error status', async () => {
      const doc = (await h.request({ method: 'GET', url: '/api/v1/openapi.json' })).json();
      const op = doc.paths['/api/v1/upload/{upload_id}']?.get;
      assert.ok(op, 'GET /api/v1/upload/{upload_id} is documented');
      assert.deepEqual(Object.keys(op.responses).sort(), [
        '200',
        '400',
        '401',
        '403',
        '404',
        '422',
        '429',
        '503',
      ]);
      assert.deepEqual(op.tags, ['uploads']);
      assert.equal(op.parameters[0].name, 'upload_id');
      const ok = JSON.stringify(op.responses['200']);
      assert.match(ok, /duration_seconds/);
      assert.match(ok, /"examples"|"example"/);
      assert.ok(!Object.keys(doc.paths).some((p) => p.startsWith('/storage/')), 'storage URLs are not API');
    });
  });
}
