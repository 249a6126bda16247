/**
 * The recording's waveform, one band per channel coloured by its role, drawn on a canvas from the decoded
 * audio (no library: wavesurfer.js puts a <style> element in its shadow root, which the app's strict
 * style-src would block). A click seeks. Long recordings are not decoded (memory); the speech timeline
 * below shows them instead.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

/** Past this size the waveform is not drawn: decoding would hold the whole call in memory. */
const MAX_BYTES = 60 * 1024 * 1024;
const BARS = 600;

/** The colour of a role (the same in the transcript and the timeline). */
export const ROLE_COLOURS: Record<string, string> = {
  agent: '#1d5fb4',
  customer: '#a34a00',
  unknown: '#5c5c5c',
};

interface Peaks {
  channels: Float32Array[];
  duration: number;
}

async function decodePeaks(url: string): Promise<Peaks> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`recording answered ${res.status}`);
  const data = await res.arrayBuffer();
  // A low rate is enough for a picture and keeps the decoded copy small.
  const context = new OfflineAudioContext(1, 1, 8000);
  const audio = await context.decodeAudioData(data);
  const channels: Float32Array[] = [];
  for (let c = 0; c < audio.numberOfChannels; c++) {
    const samples = audio.getChannelData(c);
    const peaks = new Float32Array(BARS);
    const per = Math.max(1, Math.floor(samples.length / BARS));
    for (let b = 0; b < BARS; b++) {
      let max = 0;
      for (let i = b * per, end = Math.min(samples.length, i + per); i < end; i++) {
        const v = Math.abs(samples[i] ?? 0);
        if (v > max) max = v;
      }
      peaks[b] = max;
    }
    channels.push(peaks);
  }
  return { channels, duration: audio.duration };
}

/** The waveform of a recording, with the played part darker; clicking seeks the audio element. */
export function Waveform(props: {
  url: string;
  size: number;
  roles: string[];
  time: number;
  duration: number;
  onSeek: (seconds: number) => void;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [peaks, setPeaks] = useState<Peaks | null>(null);
  const [note, setNote] = useState<string | null>(null);

  useEffect(() => {
    if (props.size > MAX_BYTES) {
      setNote('The waveform is drawn for recordings up to 60 MB; the speech timeline shows who spoke when.');
      return;
    }
    let live = true;
    decodePeaks(props.url)
      .then((p) => live && setPeaks(p))
      .catch((e) => live && setNote(`No waveform: ${e instanceof Error ? e.message : String(e)}`));
    return () => {
      live = false;
    };
  }, [props.url, props.size]);

  useEffect(() => {
    const el = canvas.current;
    if (!el || !peaks) return;
    const ratio = window.devicePixelRatio || 1;
    const width = el.clientWidth * ratio;
    const height = el.clientHeight * ratio;
    el.width = width;
    el.height = height;
    const ctx = el.getContext('2d');
    if (!ctx) return;
    ctx.clearRect(0, 0, width, height);
    const duration = props.duration || peaks.duration || 1;
    const played = Math.min(1, props.time / duration);
    const band = height / peaks.channels.length;
    const barWidth = width / BARS;
    peaks.channels.forEach((channel, c) => {
      const colour = ROLE_COLOURS[props.roles[c] ?? 'unknown'] ?? ROLE_COLOURS.unknown;
      const middle = band * c + band / 2;
      for (let b = 0; b < BARS; b++) {
        const h = Math.max(1, (channel[b] ?? 0) * (band / 2 - 2) * 2);
        ctx.globalAlpha = b / BARS < played ? 1 : 0.35;
        ctx.fillStyle = colour ?? '#5c5c5c';
        ctx.fillRect(b * barWidth, middle - h / 2, Math.max(1, barWidth - 1), h);
      }
    });
    ctx.globalAlpha = 1;
    ctx.fillStyle = '#111';
    ctx.fillRect(played * width - ratio, 0, 2 * ratio, height);
  }, [peaks, props.time, props.duration, props.roles]);

  const seek = (event: MouseEvent) => {
    const el = canvas.current;
    const duration = props.duration || peaks?.duration;
    if (!el || !duration) return;
    const rect = el.getBoundingClientRect();
    props.onSeek(((event.clientX - rect.left) / rect.width) * duration);
  };

  if (note) return <p class="muted">{note}</p>;
  return (
    <div class="waveform">
      {!peaks && <p class="muted">Drawing the waveform…</p>}
      {/* The audio element's own controls are the accessible way to seek; this is the pointer's. */}
      <canvas
        ref={canvas}
        class={peaks ? 'ready' : 'pending'}
        data-channels={peaks?.channels.length ?? 0}
        role="img"
        aria-label="Waveform of the recording, one band per channel (click to seek)"
        onClick={seek}
      />
      {peaks && (
        <p class="legend">
          {peaks.channels.map((_, c) => (
            <span class={`role-${props.roles[c] ?? 'unknown'}`}>
              Channel {c + 1}: {props.roles[c] ?? 'unknown'}
            </span>
          ))}
        </p>
      )}
    </div>
  );
}
