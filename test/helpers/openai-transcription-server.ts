/**
 * A local server of the OpenAI audio transcription API as documented: `POST /v1/audio/transcriptions`,
 * multipart/form-data with `file`, `model`, `response_format` and `timestamp_granularities[]`, answering
 * `verbose_json` (`task`, `language`, `duration`, `text`, `segments[]` with `id`, `seek`, `start`, `end`,
 * `text`, `tokens`, `temperature`, `avg_logprob`, `compression_ratio`, `no_speech_prob`, and `words[]`).
 * Its "recognition" finds the runs of loud samples in the WAV it gets, so times can be checked exactly.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server got it. */
export interface ReceivedRequest {
  at: number;
  authorization: string | undefined;
  contentType: string;
  fields: Record<string, string[]>;
  file: { name: string; type: string; bytes: Buffer } | undefined;
}

/** A scripted answer instead of a transcription (e.g. a 429). */
export interface ScriptedAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** The server, its URL, what it received, and answers to give before transcribing. */
export interface FakeTranscriptionServer {
  url: string;
  received: ReceivedRequest[];
  script: ScriptedAnswer[];
  /** Milliseconds to think before answering a transcription (a slow server; 0 by default). */
  delayMs: number;
  /** Requests whose client closed the connection before they were answered. */
  abandoned: number;
  close(): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Runs of samples above a level, pauses under 0.3 s bridged, in seconds. */
export function loudRuns(wav: Buffer): { start: number; end: number }[] {
  const rate = wav.readUInt32LE(24);
  const pcm = new Int16Array(wav.buffer.slice(wav.byteOffset + 44, wav.byteOffset + wav.length));
  const runs: { start: number; end: number }[] = [];
  let last = -Infinity;
  for (let i = 0; i < pcm.length; i++) {
    if (Math.abs(pcm[i] as number) < 600) continue;
    const t = i / rate;
    const open = runs.at(-1);
    if (open && t - last < 0.3) open.end = t;
    else runs.push({ start: t, end: t });
    last = t;
  }
  return runs;
}

/** Starts the server on a free loopback port. */
export async function startFakeTranscriptionServer(): Promise<FakeTranscriptionServer> {
  const received: ReceivedRequest[] = [];
  const script: ScriptedAnswer[] = [];
  const fake: FakeTranscriptionServer = {
    url: '',
    received,
    script,
    delayMs: 0,
    abandoned: 0,
    close: async () => {},
  };
  const server: Server = createServer(async (req, res) => {
    res.on('close', () => {
      if (!res.writableEnded) fake.abandoned++;
    });
    if (req.method !== 'POST' || req.url !== '/v1/audio/transcriptions') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    const contentType = req.headers['content-type'] ?? '';
    let raw: Buffer;
    try {
      raw = await bodyOf(req);
    } catch {
      // The client left while sending (a run stopped mid-upload): counted as abandoned on close.
      return;
    }
    const form = await new Response(raw, { headers: { 'content-type': contentType } }).formData();
    const fields: Record<string, string[]> = {};
    let file: ReceivedRequest['file'];
    for (const [name, value] of form.entries()) {
      if (typeof value === 'string') fields[name] = [...(fields[name] ?? []), value];
      else file = { name: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) };
    }
    received.push({ at: Date.now(), authorization: req.headers.authorization, contentType, fields, file });
    const scripted = script.shift();
    if (scripted) {
      res.writeHead(scripted.status, { 'content-type': 'application/json', ...scripted.headers });
      res.end(scripted.body ?? '{"error":{"message":"scripted"}}');
      return;
    }
    if (fake.delayMs > 0) {
      // A client that leaves ends the thinking too, so no timer outlives the test.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, fake.delayMs);
        res.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (res.destroyed) return;
    }
    if (!file || fields.model?.[0] === undefined) {
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end('{"error":{"message":"file and model"}}');
      return;
    }
    const runs = loudRuns(file.bytes);
    const duration = (file.bytes.length - 44) / 2 / file.bytes.readUInt32LE(24);
    const segments = runs.map((r, id) => ({
      id,
      seek: 0,
      start: r.start,
      end: r.end,
      text: ` speech ${id}`,
      tokens: [50364, 1234],
      temperature: 0,
      avg_logprob: -0.25,
      compression_ratio: 1.2,
      no_speech_prob: 0.01,
    }));
    const words = runs.flatMap((r, id) => [
      { word: 'speech', start: r.start, end: (r.start + r.end) / 2 },
      { word: String(id), start: (r.start + r.end) / 2, end: r.end },
    ]);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        task: 'transcribe',
        language: 'english',
        duration,
        text: segments.map((s) => s.text).join(''),
        segments,
        words,
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  fake.url = `http://127.0.0.1:${port}`;
  fake.close = () => new Promise((resolve) => server.close(() => resolve()));
  return fake;
}
