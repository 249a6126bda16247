/**
 * A client that reads a call-handoff record correctly (docs/handoff-polling.md): it returns only a final
 * record, long-polls with `wait` and the last ETag so that unchanged answers are empty 304s, and backs
 * off with jitter when the service is busy or unreachable. Tested in test/handoff-example.test.ts.
 */

/** A call-handoff record (spec 2.6). */
export interface CallHandoff {
  handoff_id: string;
  final: boolean;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  finalized_at: string | null;
}

/** Options of the poller. */
export interface PollOptions {
  /** Seconds each request may wait on the server (0–30); 0 polls instead, with a growing delay. */
  wait?: number;
  signal?: AbortSignal;
  /** The fetch to use (tests count requests with it). */
  fetch?: typeof fetch;
}

function pause(seconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, seconds * 1000);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/** Waits until the record is final and returns it; throws on 401, 403, 404 and 422. */
export async function readFinalHandoff(
  baseUrl: string,
  apiKey: string,
  handoffId: string,
  options: PollOptions = {},
): Promise<CallHandoff> {
  const wait = options.wait ?? 25;
  const doFetch = options.fetch ?? fetch;
  const url = `${baseUrl}/api/v1/call-handoff/${handoffId}${wait > 0 ? `?wait=${wait}` : ''}`;
  let etag: string | null = null;
  let failures = 0;
  // Between polls when not long-polling: short while the record moves, longer while it is quiet.
  let delay = 0.5;
  for (;;) {
    const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
    if (etag) headers['if-none-match'] = etag;
    let res: Response | undefined;
    try {
      res = await doFetch(url, { headers, ...(options.signal ? { signal: options.signal } : {}) });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      // A network error: back off as for a 503.
    }
    if (res?.status === 200 || res?.status === 304) {
      failures = 0;
      if (res.status === 200) {
        etag = res.headers.get('etag');
        const record = (await res.json()) as CallHandoff;
        if (record.final) return record; // complete and immutable
        delay = 0.5;
      } else {
        delay = Math.min(5, delay * 2);
      }
      // With wait the server did the waiting: ask again at once. Without, pause with ±50 % jitter.
      if (wait === 0) await pause(delay * (0.5 + Math.random()), options.signal);
      continue;
    }
    if (!res || res.status === 429 || res.status >= 500) {
      // Exponential back-off with full jitter, never shorter than Retry-After.
      failures++;
      const retryAfter = Number(res?.headers.get('retry-after')) || 0;
      await pause(Math.max(retryAfter, Math.random() * Math.min(30, 0.5 * 2 ** failures)), options.signal);
      continue;
    }
    const body = (await res.json().catch(() => ({}))) as { error?: string };
    throw new Error(`call handoff ${handoffId}: ${res.status} ${body.error ?? ''}`.trim());
  }
}

// Run directly: `CQS_URL=… CQS_API_KEY=… node examples/handoff-poller.ts HANDOFF_ID` prints the final record.
if (process.argv[1] && import.meta.url === new URL(process.argv[1], 'file://').href) {
  const handoffId = process.argv[2];
  const { CQS_URL, CQS_API_KEY } = process.env;
  if (!handoffId || !CQS_URL || !CQS_API_KEY) {
    process.stderr.write('usage: CQS_URL=… CQS_API_KEY=… node examples/handoff-poller.ts HANDOFF_ID\n');
    process.exit(2);
  }
  process.stderr.write(`waiting for call-handoff record ${handoffId} to be final…\n`);
  const record = await readFinalHandoff(CQS_URL, CQS_API_KEY, handoffId);
  console.log(JSON.stringify(record));
}
