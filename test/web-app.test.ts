/**
 * The web app at /app/ in a real browser (Debian's Chromium, headless, through playwright-core): sign in
 * with a pasted key, filter the calls (the filters land in the URL), move through rows with the keyboard,
 * open a call, play and seek it (waveform click), click a transcript line (the audio moves there), add a
 * tag; Back through filters and from a call (the list comes back with its rows and scroll), focus after
 * Apply and "Load more", a shared URL's filters kept through Apply, the transcript following without moving
 * the window, the timeline by keyboard, a renewed recording link (a line clicked meanwhile plays from there)
 * and a refused one (the call shows, with a retry), a recording filed as a video in a video player. Each page passes axe-core with no serious or critical
 * violation; every request the page makes goes to the service's own origin and the Content-Security-Policy
 * reports nothing. The data is real: a
 * two-channel call of espeak-ng speech (scripts/analysis-set.ts) uploaded, verified and analysed by the
 * worker. With SCREENSHOTS_DIR set (npm run app:screenshots sets docs/), the pages' screenshots go there.
 * One file past the usual size for a reason: every test shares one Chromium and one company whose call was
 * made, uploaded and analysed once (about 5 s). The served files' own tests are in web-app-build.test.ts.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { type LabelledCall, makeLabelledCall } from '../scripts/analysis-set.ts';
import { updateUser } from '../src/adapters/db/repositories/users.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import type { Harness } from './helpers/harness.ts';
import { startListening } from './helpers/listening.ts';
import { pollUntil } from './helpers/poll.ts';
import { get, makeCall, type ReadKeys, readKeys } from './helpers/reads.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const missing = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium)`;
if (missing && process.env.CI) throw new Error(`${missing}: CI must run the web app's browser tests`);
if (missing) process.stderr.write(`web-app: skipped, ${missing}\n`);

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Generous: the machine may be busy (CI runs two test files at once). */
const WAIT = { timeout: 30_000 };

/**
 * The page's DOM as the in-page functions below use it (the tests' TypeScript has no DOM types). They are
 * functions, not strings: Playwright evaluates a string predicate with eval, which the app's CSP forbids.
 */
declare const window: { seeks: number[]; scrollY: number };
interface PageElement {
  currentTime: number;
  videoWidth?: number;
  paused: boolean;
  src: string;
  readyState: number;
  getAttribute(name: string): string | null;
  textContent: string | null;
  getBoundingClientRect(): { top: number; bottom: number };
  closest(selector: string): { rowIndex: number } | null;
}
declare const document: {
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): { length: number };
  activeElement: PageElement | null;
};
const rowCount = (n: number) => document.querySelectorAll('table.calls tbody tr').length === n;
/** Whether the focus is on the row of this index in the calls table (the header row is 0). */
const focusOnRow = (rowIndex: number) => document.activeElement?.closest('tr')?.rowIndex === rowIndex;
/** Whether the page is scrolled to `y` (within a pixel), and has `rows` rows. */
const rowsAndScroll = (want: { rows: number; y: number }) =>
  document.querySelectorAll('table.calls tbody tr').length === want.rows &&
  Math.abs(window.scrollY - want.y) < 2;

/** Runs axe-core in the page and returns its serious and critical violations. */
async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (an inline tag would be).
  await page.evaluate(AXE);
  const result = (await page.evaluate(
    'axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) })))',
  )) as { id: string; impact: string; nodes: string[] }[];
  return result
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.join(', ')}`);
}

describe('the web app in a browser', { skip: missing }, () => {
  let h: Harness;
  let baseUrl: string;
  let dir: string;
  let browser: BrowserContext;
  let c: TestCompany;
  let keys: ReadKeys;
  let tagKey: string;
  let recorded: LabelledCall;
  let callId: string;
  const shots = process.env.SCREENSHOTS_DIR;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cqs-web-app-'));
    recorded = makeLabelledCall({ dir, name: 'call', seed: 11, turns: 10, snrDb: 30 });
    ({ h, baseUrl } = await startListening('pglite'));
    c = await h.company();
    keys = await readKeys(c);
    tagKey = (await c.addKey(c.admin.id, ['calls', 'calls:read'])).key;

    const now = Math.floor(Date.now() / 1000);
    const tags = (sale: boolean, queue: string) => [
      { key: 'sale_closed', type: 'boolean', value: sale },
      { key: 'queue', type: 'string', value: queue },
    ];
    for (let i = 0; i < 6; i++) {
      await makeCall(h, c, keys, {
        conversationId: `plain-${i}`,
        startTime: now - 3600 * (i + 2),
        tags: tags(i % 2 === 0, i < 3 ? 'billing' : 'support'),
        transcript: [
          { role: 'agent', text: 'Hello, how can I help?', start: 0, stop: 2 },
          { role: 'customer', text: 'My invoice is wrong.', start: 2.5, stop: 4 },
        ],
      });
    }
    const res = await h.request({
      method: 'POST',
      url: '/api/v1/call/create',
      key: c.key,
      body: {
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: 'recorded-1',
        start_time: now - 600,
        filename: 'call.wav',
        speaker: { separation: 'channels', channel_map: ['agent', 'customer'] },
        tags: tags(true, 'retention'),
        transcript: recorded.utterances.map((u) => ({
          role: u.channel === 0 ? 'agent' : 'customer',
          text: u.text,
          start: Math.round(u.start * 100) / 100,
          stop: Math.round(u.stop * 100) / 100,
        })),
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    const created = res.json() as { upload_url: string; upload_content_type: string };
    const put = await fetch(created.upload_url, {
      method: 'PUT',
      headers: { 'content-type': created.upload_content_type },
      body: await readFile(recorded.path),
    });
    assert.equal(put.status, 200);
    const list = await get(h, '/api/v1/calls?conversation_id=recorded-1', keys.admin);
    callId = list.json().calls[0].id;
    // The listening harness's worker verifies and analyses the recording; setup waits for both.
    await pollUntil(
      async () => (await get(h, `/api/v1/calls/${callId}`, keys.admin)).json().analysis,
      (analysis: { status?: string } | null) => {
        assert.notEqual(analysis?.status, 'failed', JSON.stringify(analysis));
        return analysis?.status === 'ready';
      },
      { timeoutMs: 180_000, everyMs: 100, what: () => 'the recording was analysed within 3 minutes' },
    );
    if (shots) await mkdir(shots, { recursive: true });
    browser = await chromium.launchPersistentContext(join(dir, 'profile'), {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 860 },
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

  /** A page that records every request it makes and every CSP report. */
  async function openPage() {
    const page = await browser.newPage();
    const requests: string[] = [];
    const cspReports: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspReports.push(m.text());
    });
    return { page, requests, cspReports };
  }

  async function signIn(page: Page, key: string) {
    await page.goto(`${baseUrl}/app/`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('table.calls tbody tr').first().waitFor(WAIT);
  }

  it('signs in, filters, opens a call, plays, seeks, follows the transcript and tags it', async () => {
    const { page, requests, cspReports } = await openPage();
    try {
      const started = Date.now();
      await page.goto(`${baseUrl}/app/`);
      await page.getByLabel('API key').waitFor(WAIT);
      process.stderr.write(`FIGURE app_sign_in_page_ms=${Date.now() - started}\n`);
      assert.deepEqual(await axeViolations(page), [], 'sign-in page');

      // A wrong key is refused with a message; the right one signs in.
      await page.getByLabel('API key').fill('cqs_not_a_key');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').waitFor(WAIT);
      await signIn(page, tagKey);
      assert.equal(await page.locator('table.calls tbody tr').count(), 7);
      // A cold load of the calls page (browser cache emptied, key in the tab): until its first rows show.
      const cdp = await browser.newCDPSession(page);
      await cdp.send('Network.clearBrowserCache');
      await page.reload();
      await page.locator('table.calls tbody tr').first().waitFor(WAIT);
      const readyMs = (await page.evaluate('performance.now()')) as number;
      process.stderr.write(`FIGURE app_calls_page_cold_load_ms=${Math.round(readyMs)}\n`);
      // The key is in the tab's session storage, never in the URL.
      assert.equal(await page.evaluate('sessionStorage.getItem("cqs.apiKey")'), tagKey);
      assert.ok(!page.url().includes(tagKey));
      assert.deepEqual(await axeViolations(page), [], 'calls page');
      if (shots) await page.screenshot({ path: join(shots, 'app-calls.png'), fullPage: true });

      // Filters go into the URL (a view can be shared) and narrow the list.
      await page.getByLabel('Tags (key or key:value)').fill('sale_closed:true queue:billing');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForURL(/tag=sale_closed%3Atrue&tag=queue%3Abilling/, WAIT);
      await page.waitForFunction(rowCount, 2, WAIT);
      await page.getByLabel('State').selectOption('live');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.getByText('No calls match these filters.').waitFor(WAIT);
      // A shared URL opens the same view (after a reload, from the URL alone).
      await page.goto(`${baseUrl}/app/?media=ready`);
      await page.waitForFunction(rowCount, 1, WAIT);
      assert.equal(await page.getByLabel('Media').inputValue(), 'ready');
      // A shared view keeps every filter it names through another Apply: a tag value with a space (quoted in
      // the box), a conversation id (a field of its own).
      await page.goto(`${baseUrl}/app/?conversation_id=c-1&tag=${encodeURIComponent('queue:customer care')}`);
      assert.equal(await page.getByLabel('Tags (key or key:value)').inputValue(), 'queue:"customer care"');
      assert.equal(await page.getByLabel('Conversation id').inputValue(), 'c-1');
      await page.getByLabel('State').selectOption('stopped');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForURL(/state=stopped/, WAIT);
      const applied = new URL(page.url()).searchParams;
      assert.deepEqual(applied.getAll('tag'), ['queue:customer care']);
      assert.equal(applied.get('conversation_id'), 'c-1');
      // Paging with the cursor: three a page (the page size is in the URL too), "Load more" appends.
      await page.goto(`${baseUrl}/app/?limit=3`);
      await page.waitForFunction(rowCount, 3, WAIT);
      await page.getByRole('button', { name: 'Load more' }).click();
      await page.waitForFunction(rowCount, 6, WAIT);
      await page.getByRole('button', { name: 'Load more' }).click();
      await page.getByText('7 calls, all shown.').waitFor(WAIT);
      assert.equal(await page.getByRole('button', { name: 'Load more' }).count(), 0);
      await page.goto(`${baseUrl}/app/`);
      await page.locator('table.calls tbody tr').nth(6).waitFor(WAIT);

      // Keyboard: arrows move between rows, Enter opens the focused call (the newest is the recorded one).
      await page.locator('a.row-link').nth(1).focus();
      await page.keyboard.press('ArrowUp');
      assert.equal(await page.evaluate('document.activeElement?.closest("tr")?.rowIndex'), 1);
      await page.keyboard.press('Enter');
      await page.waitForURL(new RegExp(`/app/calls/${callId}$`), WAIT);

      // The call: waveform of both channels, analysis, transcript.
      await page.locator('canvas.ready[data-channels="2"]').waitFor(WAIT);
      await page.getByText('Agent talk ratio').waitFor(WAIT);
      await page.locator('.timeline-row').nth(1).waitFor(WAIT);
      assert.deepEqual(await axeViolations(page), [], 'call page');

      // Play; then, paused, seek by clicking the middle of the waveform. Each seek the element completes
      // is recorded in the page, so the checks read what happened rather than race the playback.
      await page.evaluate(
        '(() => { const a = document.querySelector("audio"); window.seeks = []; a.addEventListener("seeked", () => window.seeks.push(a.currentTime)); a.muted = true; return a.play(); })()',
      );
      await page.waitForFunction(() => (document.querySelector('audio')?.currentTime ?? 0) > 0.2, null, WAIT);
      await page.evaluate('document.querySelector("audio").pause()');
      const box = await page.locator('canvas.ready').boundingBox();
      assert.ok(box);
      await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
      const half = recorded.durationS / 2;
      await page.waitForFunction((t) => window.seeks.some((s) => Math.abs(s - t) < 0.5), half, WAIT);

      // Clicking a transcript line seeks to its start, plays, and marks the line as the one playing (at a
      // quarter of the speed, so the line stays current long enough on a busy machine).
      await page.evaluate('document.querySelector("audio").playbackRate = 0.25');
      const line = 5;
      const start = Math.round((recorded.utterances[line]?.start ?? 0) * 100) / 100;
      await page.locator('.transcript li').nth(line).getByRole('button').click();
      await page.waitForFunction((t) => window.seeks.some((s) => Math.abs(s - t) < 0.05), start, WAIT);
      await page.locator(`.transcript li:nth-child(${line + 1}).active`).waitFor(WAIT);
      await page.waitForFunction(
        (t) => (document.querySelector('audio')?.currentTime ?? 0) > t + 0.05,
        start,
        WAIT,
      );
      await page.evaluate('document.querySelector("audio").pause()');

      // A refused signed URL (as an expired one is: 403) makes the app ask for a new one and carry on from
      // the same place: here the URL is spoiled by hand, which the storage refuses the same way.
      const before = (await page.evaluate(
        '(() => { const a = document.querySelector("audio"); const at = a.currentTime; a.src = a.src + "0"; return { src: a.src, at }; })()',
      )) as { src: string; at: number };
      await page.waitForFunction(
        (b) => {
          const a = document.querySelector('audio') as unknown as {
            src: string;
            readyState: number;
            currentTime: number;
          };
          return a.src !== b.src && a.readyState >= 1 && Math.abs(a.currentTime - b.at) < 0.5;
        },
        before,
        WAIT,
      );
      if (shots) await page.screenshot({ path: join(shots, 'app-call.png'), fullPage: true });

      // Add a tag (this key has `calls`): it shows, and the API has it.
      await page.getByLabel('Key', { exact: true }).fill('reviewed');
      await page.getByLabel('Type').selectOption('boolean');
      await page.getByLabel('Value').fill('true');
      await page.getByRole('button', { name: 'Save tag' }).click();
      await page.getByText('reviewed: true').waitFor(WAIT);
      // The call's agent leaves, and a new user takes the email with a call of the same conversation_id:
      // the tag still goes to the call on screen (call/add_tags, which the page used, reached the new one).
      const db = h.services.database.db;
      await updateUser(db, c.id, c.agent.id, { active: false });
      const successor = await c.addUser(c.agent.email);
      const newer = await makeCall(h, c, keys, { conversationId: 'recorded-1' });
      // Change one: a click on the tag puts it in the form.
      await page.getByRole('button', { name: 'Change queue: retention' }).click();
      assert.equal(await page.getByLabel('Key', { exact: true }).inputValue(), 'queue');
      await page.getByLabel('Value').fill('escalated');
      await page.getByRole('button', { name: 'Save tag' }).click();
      await page.getByText('queue: escalated').waitFor(WAIT);
      const call = (await get(h, `/api/v1/calls/${callId}`, keys.admin)).json();
      const tagged = Object.fromEntries(
        call.tags.map((t: { key: string; value: unknown }) => [t.key, t.value]),
      );
      assert.equal(tagged.reviewed, true);
      assert.equal(tagged.queue, 'escalated');
      assert.deepEqual((await get(h, `/api/v1/calls/${newer.id}`, keys.admin)).json().tags, []);
      await updateUser(db, c.id, successor.id, { active: false });
      await updateUser(db, c.id, c.agent.id, { active: true });

      // Everything the page asked for came from the service's own origin; the CSP blocked nothing.
      const foreign = requests.filter((u) => !u.startsWith(`${baseUrl}/`) && !u.startsWith('data:'));
      assert.deepEqual(foreign, []);
      assert.ok(
        requests.some((u) => u.startsWith(`${baseUrl}/storage/`)),
        'the recording came from the signed URL',
      );
      assert.deepEqual(cspReports, []);
    } finally {
      await page.close();
    }
  });

  it('with a read-only key shows the tags without the form', async () => {
    const { page } = await openPage();
    try {
      await signIn(page, keys.agent);
      await page.goto(`${baseUrl}/app/calls/${callId}`);
      await page.getByText('Read-only: tagging needs a key with the calls scope.').waitFor(WAIT);
      assert.equal(await page.getByRole('button', { name: 'Save tag' }).count(), 0);
    } finally {
      await page.close();
    }
  });

  it('keeps the list through Back (its filters, the rows loaded, the scroll), typed filters and focus', async () => {
    const { page } = await openPage();
    try {
      // A short window, so that six rows scroll.
      await page.setViewportSize({ width: 1280, height: 420 });
      await signIn(page, tagKey);
      const all = await page.locator('table.calls tbody tr').count();
      // Each Apply is a history entry: Back goes through the filters, then to the list without them. The
      // focus stays on Apply (the form is made again for the new filters).
      const tagBox = page.getByLabel('Tags (key or key:value)');
      await tagBox.fill('queue:billing');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForURL(/\?tag=queue%3Abilling$/, WAIT);
      await page.waitForFunction(rowCount, 3, WAIT);
      await page.waitForFunction(() => document.activeElement?.textContent === 'Apply', null, WAIT);
      await tagBox.fill('queue:support');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForURL(/\?tag=queue%3Asupport$/, WAIT);
      await page.waitForFunction(rowCount, 3, WAIT);
      await page.goBack();
      await page.waitForURL(/\?tag=queue%3Abilling$/, WAIT);
      assert.equal(await tagBox.inputValue(), 'queue:billing');
      await page.goBack();
      await page.waitForURL(/\/app\/$/, WAIT);
      await page.waitForFunction(rowCount, all, WAIT);

      // Clear goes back to the whole list, with the focus in the (re-made) form's first field.
      await tagBox.fill('queue:billing');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForFunction(rowCount, 3, WAIT);
      await page.getByRole('link', { name: 'Clear' }).click();
      await page.waitForURL(/\/app\/$/, WAIT);
      await page.waitForFunction(rowCount, all, WAIT);
      await page.waitForFunction(
        () => document.activeElement?.getAttribute('name') === 'agent_email',
        null,
        WAIT,
      );

      // Text typed in a filter and not applied yet stays through "Load more"; the button stays while the
      // page loads, and the focus goes to the first new row.
      await page.goto(`${baseUrl}/app/?limit=3`);
      await page.waitForFunction(rowCount, 3, WAIT);
      await page.getByLabel('Agent email').fill('typed@example.com');
      await page.getByRole('button', { name: 'Load more' }).click();
      await page.waitForFunction(rowCount, 6, WAIT);
      await page.waitForFunction(focusOnRow, 4, WAIT);
      assert.equal(await page.getByLabel('Agent email').inputValue(), 'typed@example.com');

      // A call opened from the list, then Back: the six rows again, scrolled where they were; the same
      // through the call page's link back to the list.
      for (const back of ['browser', 'link'] as const) {
        const y = (await page.evaluate(
          '(() => { window.scrollTo(0, document.documentElement.scrollHeight); return window.scrollY; })()',
        )) as number;
        assert.ok(y > 0, 'the list scrolls');
        await page.locator('a.row-link').nth(5).click();
        await page.waitForURL(/\/app\/calls\//, WAIT);
        await page.getByRole('heading', { name: /^Call / }).waitFor(WAIT);
        if (back === 'browser') await page.goBack();
        else await page.getByRole('link', { name: '← Calls' }).click();
        await page.waitForURL(/\/app\/\?limit=3$/, WAIT);
        await page.waitForFunction(rowsAndScroll, { rows: 6, y }, WAIT);
      }

      // Signing out forgets the list last shown (its filters may name an agent) with the key.
      assert.equal(await page.evaluate('sessionStorage.getItem("cqs.lastList")'), '?limit=3');
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('API key').waitFor(WAIT);
      assert.equal(await page.evaluate('sessionStorage.getItem("cqs.lastList")'), null);
    } finally {
      await page.close();
    }
  });

  it('keeps what a shared URL filters on through an Apply: a tag key with a space, times to the second', async () => {
    const { page } = await openPage();
    try {
      await signIn(page, keys.admin);
      const now = Math.floor(Date.now() / 1000);
      const from = now - 86_400 * 3 - (now % 60) + 17;
      const until = now + 3600 - (now % 60) + 41;
      await page.goto(
        `${baseUrl}/app/?start_time_gte=${from}&start_time_lt=${until}&tag=${encodeURIComponent('my key:val')}`,
      );
      assert.equal(await page.getByLabel('Tags (key or key:value)').inputValue(), '"my key":val');
      await page.getByLabel('Media').selectOption('ready');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForURL(/media=ready/, WAIT);
      const applied = new URL(page.url()).searchParams;
      assert.equal(applied.get('start_time_gte'), String(from));
      assert.equal(applied.get('start_time_lt'), String(until));
      assert.deepEqual(applied.getAll('tag'), ['my key:val']);
      // A time typed to the second is applied to the second.
      await page.getByLabel('From').fill('2024-01-02T03:04:05');
      await page.getByRole('button', { name: 'Apply' }).click();
      const typed = Math.floor(new Date('2024-01-02T03:04:05').getTime() / 1000);
      await page.waitForURL(new RegExp(`start_time_gte=${typed}(&|$)`), WAIT);
    } finally {
      await page.close();
    }
  });

  it('on a call: the transcript follows without scrolling the window, the timeline seeks by keyboard, and a line clicked while the recording link is renewed plays from that line', async () => {
    const { page } = await openPage();
    try {
      await page.setViewportSize({ width: 1280, height: 500 });
      await signIn(page, tagKey);
      await page.goto(`${baseUrl}/app/calls/${callId}`);
      await page.locator('canvas.ready').waitFor(WAIT);
      await page.locator('.timeline-row').nth(1).waitFor(WAIT);
      await page.evaluate(
        '(() => { const a = document.querySelector("audio"); window.seeks = []; a.addEventListener("seeked", () => window.seeks.push(a.currentTime)); a.muted = true; })()',
      );

      // The agent's timeline is a button: Enter goes to the agent's next stretch of speech.
      const speech = (await get(h, `/api/v1/calls/${callId}`, keys.admin)).json().analysis.speech as {
        role: string;
        start: number;
      }[];
      const next = speech.find((s) => s.role === 'agent' && s.start > 0.05);
      assert.ok(next, 'the agent speaks after the start');
      await page.getByRole('button', { name: /^agent speech/ }).focus();
      await page.keyboard.press('Enter');
      await page.waitForFunction((t) => window.seeks.some((s) => Math.abs(s - t) < 0.05), next.start, WAIT);

      // Read down to the uploads, then the player moves to the last line: the transcript's list scrolls to
      // it, the window stays where the reader is.
      const y = (await page.evaluate(
        '(() => { window.scrollTo(0, document.documentElement.scrollHeight); return window.scrollY; })()',
      )) as number;
      const listBottom = (await page.evaluate(
        'document.querySelector(".transcript").getBoundingClientRect().bottom',
      )) as number;
      assert.ok(listBottom < 0, `the transcript is above the window (its bottom at ${listBottom})`);
      const last = recorded.utterances.length - 1;
      const lastUtterance = recorded.utterances[last];
      assert.ok(lastUtterance);
      await page.evaluate(
        `document.querySelector("audio").currentTime = ${(lastUtterance.start + lastUtterance.stop) / 2}`,
      );
      await page
        .locator(`.transcript li:nth-child(${last + 1}).active`)
        .waitFor({ state: 'attached', ...WAIT });
      // The list scrolls in an effect after the line is marked: waited for, not read at once.
      await page.waitForFunction(
        () => {
          const list = document.querySelector('.transcript')?.getBoundingClientRect();
          const line = document.querySelector('.transcript li.active')?.getBoundingClientRect();
          return !!list && !!line && line.top >= list.top - 1 && line.bottom <= list.bottom + 1;
        },
        undefined,
        WAIT,
      );
      assert.equal(await page.evaluate('window.scrollY'), y);

      // The signed URL expires (spoiled here by hand, which the storage refuses the same way) and the app
      // asks for a new one; a line clicked meanwhile plays from that line once the new URL is in, not from
      // where the player was.
      let release = () => {};
      const held = new Promise<void>((done) => {
        release = done;
      });
      let asked = () => {};
      const askedNew = new Promise<void>((done) => {
        asked = done;
      });
      const isLink = (url: URL) => url.pathname.endsWith('/recording');
      await page.route(isLink, async (route) => {
        asked();
        await held;
        await route.continue();
      });
      await page.evaluate('(() => { const a = document.querySelector("audio"); a.src = a.src + "0"; })()');
      await askedNew;
      const line = 2;
      const start = Math.round((recorded.utterances[line]?.start ?? 0) * 100) / 100;
      await page.locator('.transcript li').nth(line).getByRole('button').click();
      release();
      await page.waitForFunction((t) => window.seeks.some((s) => Math.abs(s - t) < 0.05), start, WAIT);
      await page.waitForFunction(
        (t) => {
          const a = document.querySelector('audio');
          return !!a && !a.paused && a.currentTime > t + 0.05;
        },
        start,
        WAIT,
      );
      await page.unroute(isLink);
    } finally {
      await page.close();
    }
  });

  it('shows a call whose recording link, or its renewal, is refused for a while (503) with a retry, and no seeking without a recording', async () => {
    const { page } = await openPage();
    try {
      let answer: 'busy' | 'missing' | 'pass' = 'busy';
      await page.route(
        (url) => url.pathname.endsWith('/recording'),
        (route) => {
          if (answer === 'pass') return route.continue();
          const busy = answer === 'busy';
          answer = 'pass';
          return route.fulfill({
            status: busy ? 503 : 404,
            headers: busy ? { 'retry-after': '1' } : {},
            contentType: 'application/json',
            body: JSON.stringify({ error: busy ? 'Storage unavailable' : 'Not found' }),
          });
        },
      );
      await signIn(page, tagKey);
      await page.goto(`${baseUrl}/app/calls/${callId}`);
      await page.getByRole('heading', { name: 'Call recorded-1' }).waitFor(WAIT);
      await page.getByText('The recording could not be had: Storage unavailable').waitFor(WAIT);
      assert.doesNotMatch(await page.locator('main').innerText(), /Error:/);
      assert.equal(await page.locator('audio').count(), 0);
      assert.deepEqual(await axeViolations(page), [], 'call page without its recording');
      await page.getByRole('button', { name: 'Try again' }).click();
      await page.locator('audio').waitFor({ state: 'attached', ...WAIT });
      await page.locator('canvas.ready').waitFor(WAIT);

      // The link expires (spoiled by hand) and its renewal is refused too: that shows under the player with
      // a retry (the player did nothing, and said nothing), and the retry renews it.
      answer = 'busy';
      const spoiled = await page.evaluate(
        '(() => { const a = document.querySelector("audio"); a.src = a.src + "0"; return a.src; })()',
      );
      await page.getByText('The recording link could not be renewed: Storage unavailable').waitFor(WAIT);
      assert.deepEqual(await axeViolations(page), [], 'call page with a refused renewal');
      await page.getByRole('button', { name: 'Try again' }).click();
      await page.waitForFunction(
        (s) => {
          const a = document.querySelector('audio');
          return !!a && a.src !== s && a.readyState >= 1;
        },
        spoiled,
        WAIT,
      );
      assert.equal(await page.getByText('could not be renewed').count(), 0);

      // Without a recording, the speech timeline is a picture, not buttons that do nothing.
      answer = 'missing';
      await page.reload();
      await page.getByText('No playable recording').waitFor(WAIT);
      await page.locator('.timeline-row').nth(1).waitFor(WAIT);
      assert.equal(await page.getByRole('button', { name: /speech/ }).count(), 0);
      assert.equal(await page.getByRole('img', { name: /^agent speech/ }).count(), 1);
      assert.deepEqual(await axeViolations(page), [], 'call page without a recording');
    } finally {
      await page.close();
    }
  });

  it('says so when the service transcribed the call and heard no speech', async () => {
    const { page } = await openPage();
    try {
      // The call as the API shows one whose engine heard nothing: an empty transcript of its own.
      await page.route(
        (url) => url.pathname === `/api/v1/calls/${callId}`,
        async (route) => {
          const answer = await route.fetch();
          const call = { ...(await answer.json()), transcript: [], transcript_source: 'transcription' };
          return route.fulfill({ response: answer, json: call });
        },
      );
      await signIn(page, tagKey);
      await page.goto(`${baseUrl}/app/calls/${callId}`);
      await page.getByRole('heading', { name: 'Call recorded-1' }).waitFor(WAIT);
      await page.getByText('Transcribed by the service: no speech was heard.').waitFor(WAIT);
      assert.equal(await page.locator('.transcript li').count(), 0);
      assert.equal(await page.getByText('Click a line').count(), 0);
    } finally {
      await page.close();
    }
  });

  it('shows a recording filed as a video in a video player, which plays', async () => {
    // A company of its own: the other tests count the first company's calls.
    const v = await h.company();
    const vKeys = await readKeys(v);
    const mp4 = join(dir, 'call.mp4');
    execFileSync('ffmpeg', [
      ...['-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=blue:s=320x240:d=6'],
      ...['-i', recorded.path, '-t', '6', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', mp4],
    ]);
    const res = await h.request({
      method: 'POST',
      url: '/api/v1/call/create',
      key: v.key,
      body: {
        agent_email: v.agent.email,
        product_id: v.productId,
        conversation_id: 'video-1',
        filename: 'call.mp4',
        content_type: 'video/mp4',
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    const created = res.json() as { upload_url: string; upload_content_type: string };
    const put = await fetch(created.upload_url, {
      method: 'PUT',
      headers: { 'content-type': created.upload_content_type },
      body: await readFile(mp4),
    });
    assert.equal(put.status, 200);
    const id = (await get(h, '/api/v1/calls?conversation_id=video-1', vKeys.admin)).json().calls[0].id;
    await pollUntil(
      async () => (await get(h, `/api/v1/calls/${id}`, vKeys.admin)).json().media,
      (media: { status?: string } | null) => {
        assert.notEqual(media?.status, 'rejected', JSON.stringify(media));
        return media?.status === 'ready';
      },
      { timeoutMs: 60_000, everyMs: 100, what: () => 'the upload was verified within a minute' },
    );

    const { page, cspReports } = await openPage();
    try {
      await signIn(page, vKeys.admin);
      await page.goto(`${baseUrl}/app/calls/${id}`);
      await page.getByRole('heading', { name: 'Call video-1' }).waitFor(WAIT);
      await page.locator('video.media').waitFor(WAIT);
      assert.equal(await page.locator('audio').count(), 0, 'one player, the video');
      await page.waitForFunction(() => (document.querySelector('video')?.videoWidth ?? 0) > 0, null, WAIT);
      assert.equal(await page.evaluate('document.querySelector("video").videoWidth'), 320);
      await page.evaluate(
        '(() => { const v = document.querySelector("video"); v.muted = true; return v.play(); })()',
      );
      await page.waitForFunction(() => (document.querySelector('video')?.currentTime ?? 0) > 0.2, null, WAIT);
      assert.deepEqual(await axeViolations(page), []);
      assert.deepEqual(cspReports, []);
    } finally {
      await page.close();
    }
  });

  it('serves the app without a key, with a strict CSP, and its own routes from the page', async () => {
    for (const path of ['/app/', '/app/calls/anything']) {
      const res = await fetch(`${baseUrl}${path}`);
      assert.equal(res.status, 200);
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.match(csp, /media-src 'self'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      assert.match(await res.text(), /<div id="root">/);
    }
    assert.equal((await fetch(`${baseUrl}/app/assets/missing.js`)).status, 404);
  });
});
