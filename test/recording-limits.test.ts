/**
 * The longest recording analysed and transcribed (RECORDING_MAX_SECONDS), counted on the decoded audio: a
 * few kilobytes of FLAC can hold hours of silence (85 kB held 10 h, and its transcription wrote 2.2 GB to
 * the temporary folder). A longer one's analysis and transcription fail with a reason; the recording itself
 * stays ready and playable. And room in the temporary folder is made sure of before channels are written.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { NoRoomError, requireFreeSpace } from '../src/adapters/work-dir.ts';
import { callDetailOf, createCallWithRecording } from './helpers/calls.ts';
import { type Harness, startHarness } from './helpers/harness.ts';

describe('a recording longer than RECORDING_MAX_SECONDS', () => {
  let dir: string;
  let longPath: string;
  let h: Harness;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cqs-limits-'));
    longPath = join(dir, 'long.flac');
    // Ten minutes of stereo silence: about 140 kB.
    execFileSync('ffmpeg', [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'anullsrc=r=8000:cl=stereo',
      '-t',
      '600',
      '-c:a',
      'flac',
      longPath,
    ]);
    h = await startHarness('pglite', { RECORDING_MAX_SECONDS: '60', TRANSCRIBER: 'pocketsphinx' });
  });
  after(async () => {
    await h.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('is neither analysed nor transcribed, with a reason, and stays playable', async () => {
    const c = await h.company();
    assert.ok((await stat(longPath)).size < 200_000);
    await createCallWithRecording(
      h,
      c,
      {
        conversationId: 'long-silence',
        filename: 'long.flac',
        contentType: 'audio/flac',
        speaker: { separation: 'channels', channel_map: ['agent', 'customer'] },
      },
      await readFile(longPath),
    );
    await h.runJobs();
    const reader = (await c.addKey(c.admin.id, ['calls:read'])).key;
    const call = await callDetailOf(h, reader, 'long-silence');
    assert.equal(call.media.status, 'ready');
    assert.equal(call.analysis.status, 'failed');
    assert.match(call.analysis.reason, /longer than 60 s \(RECORDING_MAX_SECONDS\)/);
    assert.equal(call.transcription.status, 'failed');
    assert.match(call.transcription.reason, /longer than 60 s \(RECORDING_MAX_SECONDS\)/);
    const recording = await h.request({
      method: 'GET',
      url: `/api/v1/calls/${call.id}/recording?redirect=false`,
      key: reader,
    });
    assert.equal(recording.statusCode, 200, recording.body);
  });

  it('is written for an engine only when the temporary folder has room for it', async () => {
    await requireFreeSpace(tmpdir(), 1, 'a byte');
    await assert.rejects(requireFreeSpace(tmpdir(), 2 ** 60, 'the decoded channels'), (error: Error) => {
      assert.ok(error instanceof NoRoomError);
      assert.match(
        error.message,
        /not enough room in the temporary folder for the decoded channels: \d+ MB needed/,
      );
      return true;
    });
  });
});
