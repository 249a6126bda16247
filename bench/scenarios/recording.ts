/**
 * Scenario 10: downloads of a recording of BENCH_DOWNLOAD_BYTES (200 MB) through GET /api/v1/calls/{id}/
 * recording's signed URL (embedded storage), one after another, vs a bare node:http server streaming the
 * same file from disk; and how much the service's resident memory grows over its idle size meanwhile. The
 * recording is a real WAV (silence), uploaded and verified through the service first, and the downloads
 * begin once the worker has analysed it (in the service's process).
 */
import { open, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { CqsNodeClient, fileSource } from '../../packages/client/src/node.ts';
import { startBaseline } from '../lib/baseline.ts';
import { quantile } from '../lib/load.ts';
import { freshConversationId } from '../lib/payloads.ts';
import { ratioEntry, roundMb } from '../lib/report.ts';
import { type RssGrowth, rssGrowthMeter } from '../lib/rss.ts';
import { startBenchService } from '../lib/service.ts';
import { requireRoute, type Scenario, using } from './scenario.ts';

const MAX_GROWTH_MB = 64;
const BASELINE = 'bare node:http streaming the file from disk';
const TARGET = `≥ 0.80; growth ≤ ${MAX_GROWTH_MB} MB`;

const name = (bytes: number) =>
  `10 recording download ${Math.round(bytes / 1e6)} MB from embedded storage (rps = MB/s; p50/p99 = ms per download; peak RSS = growth over idle)`;

/** Writes a stereo 16-bit WAV of silence of about `bytes`, a block at a time. */
async function writeWav(path: string, bytes: number): Promise<void> {
  const data = Math.floor((bytes - 44) / 4) * 4;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(2, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(32000, 28);
  header.writeUInt16LE(4, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data, 40);
  const file = await open(path, 'w');
  try {
    await file.write(header);
    const block = Buffer.alloc(1 << 20);
    for (let written = 0; written < data; written += block.length) {
      await file.write(block, 0, Math.min(block.length, data - written));
    }
  } finally {
    await file.close();
  }
}

/**
 * Asks `target` for the URL (for the service, a signed URL: asking for it is part of the cost), GETs it and
 * discards the body; answers the status, bytes and milliseconds from the ask to the body's end.
 */
async function download(
  target: () => Promise<string>,
): Promise<{ status: number; bytes: number; ms: number }> {
  const started = performance.now();
  const url = await target();
  return new Promise((resolve, reject) => {
    const req = request(url, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

interface Downloads {
  ms: number[];
  bytes: number;
  seconds: number;
  errors: number;
  firstFailure: string | undefined;
}

/** Scenario 10. */
export const recordingScenario: Scenario = {
  id: 'recording',
  entries: (settings) => [{ name: name(settings.downloadBytes), baseline: BASELINE, target: TARGET }],
  async run(context) {
    const { settings } = context;
    const bytes = settings.downloadBytes;
    return using(
      startBenchService({ name: 'recording', cpuProfileDir: settings.cpuProfileDir }),
      async (service) => {
        requireRoute(service, 'GET', '/api/v1/calls/{id}/recording');
        const file = join(service.dataDir, 'bench-recording.wav');
        await writeWav(file, bytes);
        const writer = new CqsNodeClient({ baseUrl: service.url, apiKey: service.callsKey });
        const conversationId = freshConversationId('recording');
        const { status } = await writer.uploadRecording(
          {
            agent_email: service.agentEmail,
            product_id: service.productId,
            conversation_id: conversationId,
            filename: 'call.wav',
            body: await fileSource(file),
          },
          { verify: { timeoutMs: 600_000 } },
        );
        if (status.status !== 'ready')
          throw new Error(`the recording was ${status.status}: ${status.reason}`);
        const reader = new CqsNodeClient({ baseUrl: service.url, apiKey: service.readerKey });
        let id = '';
        for await (const call of reader.listCalls({ conversation_id: conversationId })) id = call.id;
        // The worker analyses the new recording in the service's process: the downloads are measured after.
        const analysed = Date.now() + 600_000;
        while ((await reader.getCall(id)).analysis?.status === 'pending') {
          if (Date.now() > analysed) throw new Error('the recording was not analysed within 10 minutes');
          await new Promise((r) => setTimeout(r, 200));
        }
        return using(startBaseline('serve-file.ts', { FILE: file }), async (baseline) => {
          // A fresh signed URL for each download (they expire); asking for it is part of the cost.
          const targets = [
            async () => (await reader.recordingUrl(id)).url,
            async () => `${baseline.url}/recording`,
          ];
          const size = (await stat(file)).size;
          for (const target of targets) await download(target);
          await new Promise((r) => setTimeout(r, 1000));
          const meters = [rssGrowthMeter(service.pid), rssGrowthMeter(baseline.child.pid)];
          const sums: Downloads[] = targets.map(() => ({
            ms: [],
            bytes: 0,
            seconds: 0,
            errors: 0,
            firstFailure: undefined,
          }));
          let rss: RssGrowth[] = [];
          try {
            for (let i = 0; i < settings.downloads; i++) {
              for (const [t, target] of targets.entries()) {
                const sum = sums[t] as Downloads;
                // A connection closed without an answer (or mid-body) is an error, not the end of the run.
                const got = await download(target).catch((error: unknown) => ({
                  status: 0,
                  bytes: 0,
                  ms: 0,
                  failure: String(error),
                }));
                if (got.status === 200 && got.bytes === size) {
                  sum.ms.push(got.ms);
                  sum.bytes += got.bytes;
                  sum.seconds += got.ms / 1000;
                } else {
                  sum.errors++;
                  sum.firstFailure ??= 'failure' in got ? got.failure : `${got.status}, ${got.bytes} bytes`;
                }
              }
            }
          } finally {
            rss = meters.map((m) => m.stop());
          }
          const [mine, base] = sums as [Downloads, Downloads];
          const [serviceRss] = rss as [RssGrowth, RssGrowth];
          const mbPerS = (d: Downloads) => (d.seconds > 0 ? d.bytes / 1e6 / d.seconds : 0);
          context.log(
            `service: ${mbPerS(mine).toFixed(1)} MB/s, per download ${mine.ms.map((m) => `${Math.round(m)} ms`).join(', ')}, ` +
              `RSS idle ${serviceRss.idle.toFixed(1)} MB, peak ${serviceRss.peak.toFixed(1)} MB ` +
              `(+${serviceRss.growth.toFixed(1)}; peak ${serviceRss.how === 'VmHWM' ? 'VmHWM since the meter reset it' : 'sampled every 100 ms'}); ` +
              `${BASELINE}: ${mbPerS(base).toFixed(1)} MB/s, per download ${base.ms.map((m) => `${Math.round(m)} ms`).join(', ')}`,
          );
          const sorted = mine.ms.sort((a, b) => a - b);
          return [
            ratioEntry({
              name: name(bytes),
              service: {
                rps: mbPerS(mine),
                p50_ms: quantile(sorted, 0.5),
                p99_ms: quantile(sorted, 0.99),
                errors: mine.errors,
                peak_rss_mb: serviceRss.growth,
              },
              baseline: { name: BASELINE, rps: mbPerS(base), errors: base.errors },
              minRatio: 0.8,
              target: TARGET,
              // Judged on the growth as the table prints it (report.ts).
              extra: roundMb(serviceRss.growth) <= MAX_GROWTH_MB,
            }),
          ];
        });
      },
    );
  },
};
