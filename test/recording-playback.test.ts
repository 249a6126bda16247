/**
 * A browser plays and seeks a recording through its signed URL (decision 25): Debian's Chromium, headless,
 * opens a page on the service's own origin, puts GET /api/v1/calls/{id}/recording's URL into an <audio>
 * element, seeks near the end and plays. The check is what the element reports (readyState, currentTime)
 * and that the browser fetched ranges (206). Skipped, with a message, only where no Chromium is installed
 * (never in CI: `.ci/run` installs it).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type BrowserContext, chromium } from 'playwright-core';
import type { Harness } from './helpers/harness.ts';
import { startListening } from './helpers/listening.ts';
import { makeRecording } from './helpers/media.ts';
import { get, makeCall, readKeys } from './helpers/reads.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const missing = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium)`;
if (missing && process.env.CI) throw new Error(`${missing}: CI must run the playback check`);
if (missing) process.stderr.write(`recording-playback: skipped, ${missing}\n`);

/** Long enough (19 MB as WAV) that a seek near the end is a new range request, not a read of a buffer. */
const SECONDS = 300;
const SEEK_TO = 280.5;

/**
 * Runs in the page (plain JavaScript, given to the browser as text): loads `src` into an <audio>, seeks to
 * `seekTo`, plays muted for 0.7 s, and reports what the element says.
 */
const PAGE_SCRIPT = `async (src, seekTo) => {
  const audio = document.createElement('audio');
  audio.preload = 'auto';
  document.body.append(audio);
  const state = () => ({ currentTime: audio.currentTime, readyState: audio.readyState, paused: audio.paused });
  const once = (name) =>
    new Promise((resolve, reject) => {
      audio.addEventListener(name, () => resolve(), { once: true });
      audio.addEventListener('error', () => reject(new Error(audio.error?.message || 'media error')), { once: true });
    });
  let afterSeek = null;
  try {
    const loaded = once('loadedmetadata');
    audio.src = src;
    await loaded;
    const seeked = once('seeked');
    audio.currentTime = seekTo;
    await seeked;
    afterSeek = state();
    audio.muted = true;
    await audio.play();
    await new Promise((resolve) => setTimeout(resolve, 700));
    audio.pause();
    return { duration: audio.duration, afterSeek, afterPlay: state(), error: null };
  } catch (error) {
    return { duration: audio.duration, afterSeek: afterSeek ?? state(), afterPlay: state(), error: String(error) };
  }
}`;

/** What the page reports after loading, seeking and playing. */
interface Played {
  duration: number;
  afterSeek: { currentTime: number; readyState: number };
  afterPlay: { currentTime: number; readyState: number; paused: boolean };
  error: string | null;
}

describe('a browser plays and seeks a recording through its signed URL', { skip: missing }, () => {
  let h: Harness;
  let baseUrl: string;
  let dir: string;
  let browser: BrowserContext;
  const reads: { range: string; status: number }[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cqs-playback-'));
    ({ h, baseUrl } = await startListening('pglite'));
    // The storage's reads (Range asked, status answered), to see the browser seek by ranges.
    h.app.server.on('request', (request, response) => {
      if (!request.url?.startsWith('/storage/') || request.method !== 'GET') return;
      const range = request.headers.range ?? '';
      // 'close' also counts reads the browser dropped half way (it does when it seeks).
      response.on('close', () => reads.push({ range, status: response.statusCode }));
    });
    // A fresh profile for each run (Playwright takes it as the persistent context's folder).
    browser = await chromium.launchPersistentContext(join(dir, 'profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
        '--disable-sync',
        '--autoplay-policy=no-user-gesture-required',
      ],
    });
  });
  after(async () => {
    await browser?.close();
    await h?.close();
    await rm(dir, { recursive: true, force: true });
  });

  for (const [file, args] of [
    ['call.mp3', ['-ac', '2', '-c:a', 'libmp3lame', '-b:a', '128k']],
    ['call.wav', ['-ac', '2']],
  ] as const) {
    it(`loads, seeks to ${SEEK_TO} s and plays ${file}`, async () => {
      const c = await h.company();
      const keys = await readKeys(c);
      const path = join(dir, file);
      await makeRecording(path, SECONDS, [...args]);
      const call = await makeCall(h, c, keys, { conversationId: file, filename: file });
      const put = await fetch(call.upload?.upload_url ?? '', {
        method: 'PUT',
        headers: { 'content-type': file.endsWith('.mp3') ? 'audio/mpeg' : 'audio/wav' },
        body: await readFile(path),
      });
      assert.equal(put.status, 200);
      // The listening harness's worker verifies the upload; the recording is there once it is ready.
      let res = await get(h, `/api/v1/calls/${call.id}/recording?redirect=false`, keys.admin);
      for (let i = 0; i < 300 && res.statusCode === 404; i++) {
        await sleep(100);
        res = await get(h, `/api/v1/calls/${call.id}/recording?redirect=false`, keys.admin);
      }
      const link = res.json();
      assert.ok(link.url?.startsWith(baseUrl), JSON.stringify(link));

      reads.length = 0;
      const page = await browser.newPage();
      try {
        // A page of the service's own origin; the audio comes from the signed URL, not through the API key.
        await page.goto(`${baseUrl}/healthz`);
        const played = (await page.evaluate(
          `(${PAGE_SCRIPT})(${JSON.stringify(link.url)}, ${SEEK_TO})`,
        )) as Played;
        process.stderr.write(`${file}: ${JSON.stringify(played)} reads ${JSON.stringify(reads)}\n`);
        assert.equal(played.error, null);
        assert.ok(Math.abs(played.duration - SECONDS) < 0.5, `duration ${played.duration}`);
        assert.ok(
          Math.abs(played.afterSeek.currentTime - SEEK_TO) < 0.1,
          `after seek ${played.afterSeek.currentTime}`,
        );
        // HAVE_CURRENT_DATA or better: the browser has the bytes at the new position.
        assert.ok(played.afterSeek.readyState >= 2, `readyState ${played.afterSeek.readyState}`);
        assert.ok(played.afterPlay.currentTime > SEEK_TO, `after play ${played.afterPlay.currentTime}`);
        assert.ok(
          reads.some((r) => r.status === 206),
          `no ranged read: ${JSON.stringify(reads)}`,
        );
        if (file.endsWith('.wav')) {
          // 19 MB is more than the browser reads ahead: the seek is served as a range past the beginning.
          // (The 4.8 MB MP3 may arrive whole before the seek on a fast link, so only the WAV is held to it.)
          const seekRead = reads.find((r) => r.status === 206 && !/^bytes=0-/.test(r.range));
          assert.ok(seekRead, `no ranged read for the seek: ${JSON.stringify(reads)}`);
        }
      } finally {
        await page.close();
      }
    });
  }
});
