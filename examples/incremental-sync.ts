/**
 * Keep a copy up to date from the event feed: prints every event once, in commit order, and saves the
 * cursor after each page, so that a restart resumes where the last run stopped (nothing missed or repeated).
 *   CQS_URL=… CQS_API_KEY=… node examples/incremental-sync.ts CURSOR_FILE
 * The key must be an admin's with the `events:read` scope. Stop it with Ctrl-C; run it again to resume.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { clientFromEnv, usage } from './env.ts';

const cursorFile = process.argv[2];
if (!cursorFile) usage('CQS_URL=… CQS_API_KEY=… node examples/incremental-sync.ts CURSOR_FILE');

/** The saved cursor, or undefined on the first run (the feed then starts at the oldest kept event). */
async function savedCursor(file: string): Promise<string | undefined> {
  try {
    return (await readFile(file, 'utf8')).trim() || undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

const client = clientFromEnv();
const stop = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stop.abort());
const after = await savedCursor(cursorFile);
process.stderr.write(after ? `resuming from ${after}\n` : 'starting from the oldest kept event\n');
try {
  for await (const page of client.events({ ...(after ? { after } : {}), signal: stop.signal })) {
    // Apply the page to your copy here; only then save the cursor (write and rename: never half a file).
    for (const event of page.events) console.log(JSON.stringify(event));
    await writeFile(`${cursorFile}.tmp`, page.next_cursor);
    await rename(`${cursorFile}.tmp`, cursorFile);
  }
} catch (error) {
  // Anything but Ctrl-C is reported. A 410 means the saved cursor is older than the kept events: the copy
  // has to be rebuilt from the API, then the sync started again without a cursor file.
  if (!stop.signal.aborted) throw error;
}
