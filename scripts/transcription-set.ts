/**
 * Speech placed at known times for the transcription tests and measurements: espeak-ng sentences (the
 * voices of scripts/analysis-set.ts, trimmed of silence) laid on the channels of a 16 kHz WAV where asked.
 * Needs `espeak-ng` and `sox`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { wavHeader } from '../src/adapters/transcribe/wav.ts';
import { pinkNoise, random, SET_SAMPLE_RATE, synthesize } from './analysis-set.ts';

/** A sentence to place: on which channel (0 left, 1 right) and where it starts, in seconds. */
export interface Placement {
  channel: 0 | 1;
  text: string;
  at: number;
}

/** A placed sentence with its true stop (start + the trimmed speech's length). */
export interface PlacedSpeech extends Placement {
  stop: number;
}

/** Writes `name`.wav in `dir` with the placements (stereo, or mono with every channel mixed) and `tailS` of silence after the last. */
export function placeSpeech(
  dir: string,
  name: string,
  placements: readonly Placement[],
  options: { channels: 1 | 2; tailS?: number; snrDb?: number } = { channels: 2 },
): { path: string; durationS: number; placed: PlacedSpeech[] } {
  const cache = join(dir, 'utterances');
  mkdirSync(cache, { recursive: true });
  const clips = placements.map((p) => synthesize(cache, p.channel, p.text));
  const placed = placements.map((p, i) => ({ ...p, stop: p.at + (clips[i]?.length ?? 0) / SET_SAMPLE_RATE }));
  const end = Math.max(...placed.map((p) => p.stop)) + (options.tailS ?? 1);
  const length = Math.ceil(end * SET_SAMPLE_RATE);
  const channels = options.channels;
  const pcm = new Int16Array(length * channels);
  placements.forEach((p, i) => {
    const clip = clips[i] as Float32Array;
    const lane = channels === 1 ? 0 : p.channel;
    const first = Math.round(p.at * SET_SAMPLE_RATE);
    for (let s = 0; s < clip.length && first + s < length; s++) {
      const at = (first + s) * channels + lane;
      pcm[at] = Math.max(
        -32768,
        Math.min(32767, (pcm[at] as number) + Math.round((clip[s] as number) * 0.8 * 32767)),
      );
    }
  });
  if (options.snrDb !== undefined) {
    // Seeded pink noise under everything, at snrDb below the speech's power: lines are never digitally silent.
    let power = 0;
    let count = 0;
    for (const clip of clips) {
      for (const x of clip) power += (x * 0.8 * 32767) ** 2;
      count += clip.length;
    }
    const rms = Math.sqrt(power / Math.max(1, count) / 10 ** (options.snrDb / 10));
    const noise = pinkNoise(pcm.length, random(5));
    for (let i = 0; i < pcm.length; i++) {
      pcm[i] = Math.max(-32768, Math.min(32767, Math.round((pcm[i] as number) + (noise[i] as number) * rms)));
    }
  }
  const path = join(dir, `${name}.wav`);
  writeFileSync(path, Buffer.concat([wavHeader(length, channels, SET_SAMPLE_RATE), Buffer.from(pcm.buffer)]));
  return { path, durationS: length / SET_SAMPLE_RATE, placed };
}
