/**
 * Crosstalk (audit of the analysis, finding 11): the agent's voice leaking into the customer's channel at
 * −20 or −30 dB was the customer's speech, overtalk all along the agent's turn. A call of two espeak-ng
 * voices at known times (the agent's at 1 s on the left, the customer's at 2.5 s on the right, over it for
 * 0.5 s), the leak mixed in by ffmpeg; decoder, detector and figures as the worker runs them.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SET_SAMPLE_RATE, synthesize } from '../scripts/analysis-set.ts';
import { findDecoder } from '../src/adapters/decode/ffmpeg.ts';
import { wavHeader } from '../src/adapters/transcribe/wav.ts';
import { createCrosstalkGate } from '../src/adapters/vad/crosstalk.ts';
import { computeFigures, type Interval } from '../src/domain/analysis/figures.ts';
import { findSpeech } from '../src/domain/analysis/recording.ts';
import { bytesReader } from './helpers/bytes-reader.ts';

let dir: string;
let call: string;
let truth: Interval[][];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cqs-crosstalk-'));
  const agent = synthesize(dir, 0, 'thank you for calling how can I help you today');
  const customer = synthesize(dir, 1, 'I would like to check the status of my order');
  const agentStart = 1;
  const agentStop = agentStart + agent.length / SET_SAMPLE_RATE;
  // The customer starts 0.5 s before the agent stops.
  const customerStart = agentStop - 0.5;
  const customerStop = customerStart + customer.length / SET_SAMPLE_RATE;
  truth = [[{ start: agentStart, stop: agentStop }], [{ start: customerStart, stop: customerStop }]];
  const length = Math.ceil((customerStop + 1) * SET_SAMPLE_RATE);
  const pcm = new Int16Array(length * 2);
  const place = (samples: Float32Array, channel: number, start: number) => {
    const at = Math.round(start * SET_SAMPLE_RATE);
    samples.forEach((x, i) => {
      pcm[(at + i) * 2 + channel] = Math.round(x * 0.9 * 32767);
    });
  };
  place(agent, 0, agentStart);
  place(customer, 1, customerStart);
  call = join(dir, 'call.wav');
  await writeFile(call, Buffer.concat([wavHeader(length, 2, SET_SAMPLE_RATE), Buffer.from(pcm.buffer)]));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The call through an ffmpeg filter graph from [l][r] to [o]. */
function mixed(name: string, graph: string): string {
  const path = join(dir, name);
  execFileSync(findDecoder()?.path ?? 'ffmpeg', [
    ...['-nostdin', '-loglevel', 'error', '-y', '-i', call, '-filter_complex'],
    `[0:a]channelsplit=channel_layout=stereo[l][r];${graph}`,
    ...['-map', '[o]', '-c:a', 'pcm_s16le', path],
  ]);
  return path;
}

async function figures(path: string) {
  const decoder = findDecoder();
  assert.ok(decoder, 'an ffmpeg is available');
  const found = await findSpeech(decoder, bytesReader(await readFile(path)), {
    channels: 2,
    container: 'wav',
    detector: 'energy',
  });
  const tracks = (channels: readonly Interval[][]) => [
    { role: 'agent' as const, intervals: channels[0] ?? [] },
    { role: 'customer' as const, intervals: channels[1] ?? [] },
  ];
  const duration = found.durationS;
  return {
    got: computeFigures(duration, tracks(found.channels)),
    want: computeFigures(duration, tracks(truth)),
  };
}

const near = (got: number | null, want: number | null, what: string) =>
  assert.ok(Math.abs((got ?? Number.NaN) - (want ?? 0)) <= 0.15, `${what}: ${got} s, truth ${want} s`);

describe('crosstalk between the channels', () => {
  for (const [name, graph] of [
    [
      '−20 dB',
      '[l]asplit[a][e];[e]volume=0.1[leak];[r][leak]amerge=inputs=2,pan=mono|c0=c0+c1[c];[a][c]join=inputs=2:channel_layout=stereo[o]',
    ],
    [
      '−30 dB',
      '[l]asplit[a][e];[e]volume=0.03[leak];[r][leak]amerge=inputs=2,pan=mono|c0=c0+c1[c];[a][c]join=inputs=2:channel_layout=stereo[o]',
    ],
    [
      '−20 dB, 5 ms late',
      '[l]asplit[a][e];[e]adelay=5,volume=0.1[leak];[r][leak]amerge=inputs=2,pan=mono|c0=c0+c1[c];[a][c]join=inputs=2:channel_layout=stereo[o]',
    ],
  ] as const) {
    it(`does not count the agent's voice leaking into the customer's channel at ${name} as speech`, async () => {
      const { got, want } = await figures(mixed(`leak-${name.replace(/\W+/g, '')}.wav`, graph));
      near(got.talk_s.customer, want.talk_s.customer, 'customer talk_s');
      near(got.overtalk_s, want.overtalk_s, 'overtalk_s');
      near(got.talk_s.agent, want.talk_s.agent, 'agent talk_s');
      assert.deepEqual(got.interruptions, want.interruptions);
    });
  }

  it('still counts a quiet customer (−18 dB) speaking over the agent', async () => {
    const quiet = '[r]volume=0.125[q]';
    const over = await figures(mixed('quiet.wav', `${quiet};[l][q]join=inputs=2:channel_layout=stereo[o]`));
    const alone = await figures(
      mixed('quiet-alone.wav', `${quiet};[l]volume=0[s];[s][q]join=inputs=2:channel_layout=stereo[o]`),
    );
    assert.ok((over.got.talk_s.customer ?? 0) > 1, `customer talk_s ${over.got.talk_s.customer}`);
    assert.ok(
      Math.abs((over.got.talk_s.customer ?? 0) - (alone.got.talk_s.customer ?? 0)) <= 0.03,
      `customer talk_s ${over.got.talk_s.customer} s over the agent, ${alone.got.talk_s.customer} s alone`,
    );
  });

  it('finds no leak between independent signals', () => {
    const gate = createCrosstalkGate(8000);
    let seed = 1;
    const noise = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.round((seed / 2147483648 - 0.5) * 20000);
    };
    for (let f = 0; f < 500; f++) {
      const loud = Int16Array.from({ length: 80 }, noise);
      const quiet = Int16Array.from({ length: 80 }, () => Math.round(noise() / 20));
      assert.equal(gate.leaked(loud, quiet), -1);
    }
  });
});
