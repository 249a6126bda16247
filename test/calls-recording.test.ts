/**
 * GET /api/v1/calls/{id}/recording (decision 25): a 302 to a signed URL of the call's latest ready upload,
 * or its JSON with redirect=false; scope and visibility as the read side's; 404 without a ready upload.
 * The URL itself is followed here too (the embedded storage's reads are tested in storage-embedded-read).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { makeTestMedia, pathOf, type TestMedia } from './helpers/media.ts';
import { get, makeCall, type ReadKeys, readKeys } from './helpers/reads.ts';
import { assertS3Error } from './helpers/s3-errors.ts';

for (const backend of BACKENDS) {
  describe(`GET /api/v1/calls/{id}/recording (${backend})`, () => {
    let h: Harness;
    let media: TestMedia;
    before(async () => {
      h = await startHarness(backend, { RECORDING_URL_EXPIRES_IN: '120' });
      media = await makeTestMedia(['stereo.wav', 'mono.wav']);
    });
    after(async () => {
      await h.close();
      await media.remove();
    });

    async function company(): Promise<{ c: TestCompany; keys: ReadKeys }> {
      const c = await h.company();
      return { c, keys: await readKeys(c) };
    }

    /** PUTs a file to an upload URL through the embedded storage. */
    async function put(uploadUrl: string, file: string): Promise<Buffer> {
      const bytes = await readFile(media.path(file));
      const res = await h.app.inject({
        method: 'PUT',
        url: pathOf(uploadUrl),
        headers: { 'content-type': 'audio/wav' },
        payload: bytes,
      });
      assert.equal(res.statusCode, 200, res.body);
      return bytes;
    }

    /** A call whose recording (stereo.wav) is verified and ready. */
    async function callWithRecording(c: TestCompany, keys: ReadKeys, conversationId: string) {
      const call = await makeCall(h, c, keys, { conversationId, filename: 'call.wav' });
      const bytes = await put(call.upload?.upload_url ?? '', 'stereo.wav');
      await h.runJobs();
      return { id: call.id, bytes };
    }

    it('redirects (302) to a signed URL of the recording that serves its bytes, valid RECORDING_URL_EXPIRES_IN', async () => {
      const { c, keys } = await company();
      const { id, bytes } = await callWithRecording(c, keys, 'played');
      const before = Math.floor(Date.now() / 1000);
      const res = await get(h, `/api/v1/calls/${id}/recording`, keys.admin);
      assert.equal(res.statusCode, 302, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      const location = String(res.headers.location);
      assert.ok(location.startsWith(`${h.config.publicUrl}/storage/v1/object/`), location);
      const expires = Number(new URL(location).searchParams.get('X-Cqs-Expires'));
      assert.ok(expires >= before + 120 && expires <= before + 122, String(expires - before));
      // The URL is the credential: no API key.
      const read = await h.app.inject({ method: 'GET', url: pathOf(location) });
      assert.equal(read.statusCode, 200);
      assert.equal(read.headers['content-type'], 'audio/wav');
      assert.deepEqual(read.rawPayload, bytes);
    });

    it('answers the link as JSON with redirect=false, and 422 for another value or parameter', async () => {
      const { c, keys } = await company();
      const { id, bytes } = await callWithRecording(c, keys, 'linked');
      const res = await get(h, `/api/v1/calls/${id}/recording?redirect=false`, keys.agent);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      const link = res.json();
      assert.deepEqual(Object.keys(link).sort(), ['content_type', 'expires_in', 'size', 'url']);
      assert.equal(link.expires_in, 120);
      assert.equal(link.content_type, 'audio/wav');
      assert.equal(link.size, bytes.length);
      const ranged = await h.app.inject({
        method: 'GET',
        url: pathOf(link.url),
        headers: { range: 'bytes=0-3' },
      });
      assert.equal(ranged.statusCode, 206);
      assert.equal(ranged.body, 'RIFF');
      assert.equal((await get(h, `/api/v1/calls/${id}/recording?redirect=true`, keys.admin)).statusCode, 302);
      for (const query of ['redirect=no', 'redirect=0', 'download=1']) {
        const bad = await get(h, `/api/v1/calls/${id}/recording?${query}`, keys.admin);
        assert.equal(bad.statusCode, 422, query);
      }
    });

    it('needs calls:read (403 first), then visibility: another agent’s or company’s call is a 404', async () => {
      const { c, keys } = await company();
      const { id } = await callWithRecording(c, keys, 'private');
      assert.equal((await get(h, `/api/v1/calls/${id}/recording`, c.key)).statusCode, 403);
      assert.equal(
        (await get(h, '/api/v1/calls/00000000-0000-4000-8000-000000000000/recording', c.key)).statusCode,
        403,
      );
      assert.equal(
        (await h.app.inject({ method: 'GET', url: `/api/v1/calls/${id}/recording` })).statusCode,
        401,
      );
      const colleague = await c.addUser(`colleague-${Date.now()}@example.com`, { role: 'agent' });
      const colleagueKey = (await c.addKey(colleague.id, ['calls:read'])).key;
      assert.equal((await get(h, `/api/v1/calls/${id}/recording`, colleagueKey)).statusCode, 404);
      const other = await company();
      assert.equal((await get(h, `/api/v1/calls/${id}/recording`, other.keys.admin)).statusCode, 404);
      assert.equal((await get(h, `/api/v1/calls/${id}/recording`, keys.agent)).statusCode, 302);
      assert.equal((await get(h, '/api/v1/calls/not-an-id/recording', keys.admin)).statusCode, 404);
    });

    it('answers 404 while the call has no ready upload: none, pending, or rejected', async () => {
      const { c, keys } = await company();
      const plain = await makeCall(h, c, keys, { conversationId: 'no-file' });
      const none = await get(h, `/api/v1/calls/${plain.id}/recording`, keys.admin);
      assert.equal(none.statusCode, 404);
      assert.match(none.json().error, /no ready recording/);
      const pending = await makeCall(h, c, keys, { conversationId: 'pending', filename: 'p.wav' });
      assert.equal((await get(h, `/api/v1/calls/${pending.id}/recording`, keys.admin)).statusCode, 404);
      await put(pending.upload?.upload_url ?? '', 'stereo.wav');
      assert.equal((await get(h, `/api/v1/calls/${pending.id}/recording`, keys.admin)).statusCode, 404);
      // Not media at all: verification rejects it, so there is still nothing to play.
      const rejected = await makeCall(h, c, keys, { conversationId: 'rejected', filename: 'r.wav' });
      await h.app.inject({
        method: 'PUT',
        url: pathOf(rejected.upload?.upload_url ?? ''),
        headers: { 'content-type': 'audio/wav' },
        payload: 'not a recording at all',
      });
      await h.runJobs();
      assert.equal((await get(h, `/api/v1/calls/${rejected.id}/recording`, keys.admin)).statusCode, 404);
      assert.equal((await get(h, `/api/v1/calls/${pending.id}/recording`, keys.admin)).statusCode, 302);
    });

    it('serves the latest ready upload; a newer one that is not ready does not hide it', async () => {
      const { c, keys } = await company();
      const { id } = await callWithRecording(c, keys, 'twice');
      const second = await makeCall(h, c, keys, { conversationId: 'twice', filename: 'again.wav' });
      assert.equal(second.id, id);
      const mono = await put(second.upload?.upload_url ?? '', 'mono.wav');
      const stillFirst = (await get(h, `/api/v1/calls/${id}/recording?redirect=false`, keys.admin)).json();
      assert.notEqual(stillFirst.size, mono.length);
      await h.runJobs();
      const latest = (await get(h, `/api/v1/calls/${id}/recording?redirect=false`, keys.admin)).json();
      assert.equal(latest.size, mono.length);
      const read = await h.app.inject({ method: 'GET', url: pathOf(latest.url) });
      assert.deepEqual(read.rawPayload, mono);
    });

    it('answers 404 NoSuchKey at a signed URL whose object is gone', async () => {
      const { c, keys } = await company();
      const { id } = await callWithRecording(c, keys, 'gone');
      const link = (await get(h, `/api/v1/calls/${id}/recording?redirect=false`, keys.admin)).json();
      const key = decodeURIComponent(new URL(link.url).pathname.split('/object/')[1] ?? '');
      await h.services.storage.delete(key);
      assertS3Error(await h.app.inject({ method: 'GET', url: pathOf(link.url) }), 404, 'NoSuchKey');
    });
  });
}
