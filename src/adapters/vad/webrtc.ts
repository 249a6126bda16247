/**
 * The WebRTC voice activity detector (libfvad, compiled to WebAssembly by @echogarden/fvad-wasm: no
 * native build, no download). One WebAssembly instance is shared; each channel gets its own VAD state.
 */
import type { FrameDetector } from './detector.ts';

/** fvad's aggressiveness, 0 (least) to 3 (most likely to call a frame non-speech). */
export const WEBRTC_MODE = 3;

interface FvadModule {
  HEAP16: Int16Array;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  _fvad_new(): number;
  _fvad_free(instance: number): void;
  _fvad_set_mode(instance: number, mode: number): number;
  _fvad_set_sample_rate(instance: number, rate: number): number;
  _fvad_process(instance: number, frame: number, length: number): number;
}

let loading: Promise<FvadModule> | undefined;

/** Makes a WebRTC detector for one channel at `sampleRate` (8000, 16000, 32000 or 48000). */
export async function createWebRtcDetector(sampleRate: number, mode = WEBRTC_MODE): Promise<FrameDetector> {
  // Loaded at the first detector: the service uses the energy detector, so it never loads this one.
  loading ??= import('@echogarden/fvad-wasm').then((m) => m.default() as Promise<FvadModule>);
  const m = await loading;
  const instance = m._fvad_new();
  if (m._fvad_set_mode(instance, mode) !== 0 || m._fvad_set_sample_rate(instance, sampleRate) !== 0) {
    m._fvad_free(instance);
    throw new Error(`fvad refused mode ${mode} at ${sampleRate} Hz`);
  }
  const samples = sampleRate / 100;
  const buffer = m._malloc(samples * 2);
  return {
    isSpeech(frame, leaked = false) {
      m.HEAP16.set(frame.subarray(0, samples), buffer >> 1);
      const result = m._fvad_process(instance, buffer, samples);
      if (result < 0) throw new Error('fvad could not process a frame');
      return result === 1 && !leaked;
    },
    close() {
      m._free(buffer);
      m._fvad_free(instance);
    },
  };
}
