/**
 * The worker's side of transcribing a long stereo call: decodes an N-minute stereo WAV (the espeak-ng set
 * of scripts/transcription-set.ts repeated) into one 16 kHz WAV per channel with speech detection, as the
 * `call.transcribe` job does before the engine runs, and prints the process's RSS growth and the time.
 * The recogniser's own memory is measured by scripts/transcription-wer.ts.
 *
 *   node --expose-gc scripts/transcription-memory.ts [--minutes 60]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findDecoder } from '../src/adapters/decode/ffmpeg.ts';
import type { ObjectReader } from '../src/adapters/storage/storage.ts';
import { decodeChannels } from '../src/domain/transcription/transcription.ts';
import { placeSpeech } from './transcription-set.ts';

async function fileReader(path: string): Promise<ObjectReader> {
  const file = await open(path);
  return {
    size: statSync(path).size,
    async read(offset, length) {
      const buffer = new Uint8Array(length);
      const { bytesRead } = await file.read(buffer, 0, length, offset);
      return buffer.subarray(0, bytesRead);
    },
    close: () => file.close(),
  };
}

if (import.meta.main) {
  const at = process.argv.indexOf('--minutes');
  const minutes = at >= 0 ? Number(process.argv[at + 1]) : 60;
  const dir = mkdtempSync(join(tmpdir(), 'cqs-transcribe-memory-'));
  try {
    const unit = placeSpeech(dir, 'unit', [
      { channel: 0, text: 'thank you for calling how can I help you today', at: 0.5 },
      { channel: 1, text: 'I would like to check the status of my order', at: 4 },
      { channel: 0, text: 'can you give me the order number please', at: 8 },
      { channel: 1, text: 'it is four five seven two one nine', at: 11.5 },
    ]);
    const repeats = Math.ceil((minutes * 60) / unit.durationS);
    const long = join(dir, 'long.wav');
    execFileSync('sox', [unit.path, long, 'repeat', String(repeats - 1)]);
    const decoder = findDecoder();
    if (!decoder) throw new Error('no ffmpeg');
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const timer = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 50);
    const started = performance.now();
    const reader = await fileReader(long);
    const channels = await decodeChannels(decoder, reader, 'wav', 2, dir);
    await reader.close();
    clearInterval(timer);
    const seconds = (performance.now() - started) / 1000;
    const audio = channels[0]?.durationS ?? 0;
    console.log(
      `FIGURE transcribe_decode_minutes=${Math.round(audio / 6) / 10} speed_x=${Math.round(audio / seconds)} ` +
        `rss_growth_mb=${Math.round((peak - before) / 2 ** 20)} channel_wav_mb=${Math.round(statSync(channels[0]?.wavPath ?? long).size / 2 ** 20)} ` +
        `speech_intervals=${channels.map((c) => c.speech.length).join('+')}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
