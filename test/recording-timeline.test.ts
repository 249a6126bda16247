/**
 * A video whose sound starts later than its picture (itsoffset here; 1.94 s in a file of the review) is
 * played with the sound where the file's timeline puts it: the analysis counts from the same 0, so its
 * speech times match what the reviewer hears (they were early by the offset, and the transcript with them).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { callDetailOf, createCallWithRecording } from './helpers/calls.ts';
import { type Harness, startHarness } from './helpers/harness.ts';

describe('a video whose sound starts after its picture', () => {
  let dir: string;
  let video: string;
  let h: Harness;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cqs-timeline-'));
    const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { cwd: dir, stdio: 'ignore' });
    // Sound: a tone from 1 s to 3 s over faint noise, 6 s in all; the picture: 8 s; the sound 2 s in.
    run('sox', [
      '-n',
      '-r',
      '8000',
      '-c',
      '1',
      'tone.wav',
      'synth',
      '2',
      'sine',
      '440',
      'vol',
      '0.5',
      'pad',
      '1',
      '3',
    ]);
    run('sox', ['-n', '-r', '8000', '-c', '1', 'noise.wav', 'synth', '6', 'whitenoise', 'vol', '0.001']);
    run('sox', ['-m', 'tone.wav', 'noise.wav', 'sound.wav']);
    run('ffmpeg', [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=160x120:rate=10:duration=8',
      '-itsoffset',
      '2',
      '-i',
      'sound.wav',
      '-map',
      '0:v',
      '-map',
      '1:a',
      '-c:v',
      'mpeg4',
      '-c:a',
      'aac',
      'video.mp4',
    ]);
    video = join(dir, 'video.mp4');
    h = await startHarness('pglite');
  });
  after(async () => {
    await h.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("has its speech where the player has it, on the file's timeline", async () => {
    const c = await h.company();
    await createCallWithRecording(
      h,
      c,
      { conversationId: 'late-sound', filename: 'video.mp4', contentType: 'video/mp4' },
      await readFile(video),
    );
    await h.runJobs();
    const reader = (await c.addKey(c.admin.id, ['calls:read'])).key;
    const call = await callDetailOf(h, reader, 'late-sound');
    assert.equal(call.analysis.status, 'ready', call.analysis.reason);
    const speech = call.analysis.speech as { start: number; stop: number }[];
    assert.equal(speech.length, 1, JSON.stringify(speech));
    // The tone is 1-3 s into the sound, which starts about 2 s into the file (less AAC's priming).
    assert.ok(Math.abs((speech[0]?.start ?? 0) - 3) < 0.3, JSON.stringify(speech));
    assert.ok(Math.abs((speech[0]?.stop ?? 0) - 5) < 0.4, JSON.stringify(speech));
    assert.ok(Math.abs(call.analysis.duration_s - 8) < 0.3, String(call.analysis.duration_s));
  });
});
