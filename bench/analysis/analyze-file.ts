/**
 * Analyses one file the way the worker does (decoder, streamed PCM, the service's detector) in a process of
 * its own, and prints JSON: wall seconds, the recording's seconds, and how far this process's RSS rose over
 * its size just before (sampled every 50 ms). Used by the bench's analysis scenario.
 *
 *   node bench/analysis/analyze-file.ts FILE CONTAINER
 */
import { findDecoder } from '../../src/adapters/decode/ffmpeg.ts';
import { SERVICE_DETECTOR } from '../../src/domain/analysis/analysis.ts';
import { findSpeech } from '../../src/domain/analysis/recording.ts';
import { fileReader } from './file-reader.ts';

const [path, container] = process.argv.slice(2);
if (!path || !container) throw new Error('usage: node bench/analysis/analyze-file.ts FILE CONTAINER');
const decoder = findDecoder();
if (!decoder) throw new Error('no ffmpeg');
globalThis.gc?.();
const idle = process.memoryUsage().rss;
let peak = idle;
const timer = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 50);
const reader = await fileReader(path);
const began = performance.now();
const found = await findSpeech(decoder, reader, { channels: 2, container, detector: SERVICE_DETECTOR });
const seconds = (performance.now() - began) / 1000;
clearInterval(timer);
peak = Math.max(peak, process.memoryUsage().rss);
await reader.close();
process.stdout.write(
  `${JSON.stringify({ seconds, durationS: found.durationS, rssGrowthMb: (peak - idle) / 1e6, decoder: decoder.source })}\n`,
);
