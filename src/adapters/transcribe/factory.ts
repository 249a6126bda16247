/** The engine TRANSCRIBER names, made once per process (its concurrency limit is per process). */
import type { Config } from '../../config/config.ts';
import type { TranscriptionEngine } from '../../domain/transcription/engine.ts';
import { createOpenAiEngine } from './openai.ts';
import { createPocketsphinxEngine } from './pocketsphinx.ts';

const made = new WeakMap<Config['transcriber'], TranscriptionEngine | undefined>();

/** The configured engine, or undefined with TRANSCRIBER=none. */
export function transcriberOf(config: Config['transcriber']): TranscriptionEngine | undefined {
  if (!made.has(config)) made.set(config, createTranscriber(config));
  return made.get(config);
}

function createTranscriber(config: Config['transcriber']): TranscriptionEngine | undefined {
  switch (config.engine) {
    case 'none':
      return undefined;
    case 'pocketsphinx':
      return createPocketsphinxEngine({ concurrency: config.concurrency, timeoutMs: config.timeoutMs });
    case 'openai':
      return createOpenAiEngine({
        url: config.url as string,
        apiKey: config.apiKey,
        model: config.model,
        concurrency: config.concurrency,
        timeoutMs: config.timeoutMs,
        maxBytes: config.maxBytes,
      });
  }
}
