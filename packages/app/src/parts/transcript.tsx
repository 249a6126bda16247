/** The transcript beside the player: the line being spoken is marked and kept in view; a click seeks. */
import { useEffect, useRef } from 'preact/hooks';
import type { CallDetail } from '../api.ts';
import { clock } from '../format.ts';

type Segment = NonNullable<CallDetail['transcript']>[number];

/** The index of the segment playing at `time` (the last one started), or -1. */
export function activeSegment(segments: Segment[], time: number): number {
  let found = -1;
  segments.forEach((s, i) => {
    if (s.start <= time && time < s.stop) found = i;
  });
  return found;
}

/** The transcript list. */
export function Transcript(props: {
  segments: Segment[] | null;
  source: CallDetail['transcript_source'];
  time: number;
  onSeek?: (seconds: number) => void;
}) {
  const list = useRef<HTMLOListElement>(null);
  const segments = props.segments ?? [];
  const active = activeSegment(segments, props.time);
  // The line playing is kept in view by scrolling the list alone (scrollIntoView would also scroll the
  // window back here from wherever the reader is on the page).
  useEffect(() => {
    const box = list.current;
    const line = box?.children[active];
    if (!box || !line) return;
    const outer = box.getBoundingClientRect();
    const inner = line.getBoundingClientRect();
    if (inner.top < outer.top + box.clientTop) box.scrollTop -= outer.top + box.clientTop - inner.top;
    else if (inner.bottom > outer.top + box.clientTop + box.clientHeight)
      box.scrollTop += inner.bottom - (outer.top + box.clientTop + box.clientHeight);
  }, [active]);
  if (!props.segments) return <p class="muted">No transcript.</p>;
  // An engine that heard no speech stores an empty transcript; without a word the reader saw only the hint.
  if (segments.length === 0) {
    return (
      <p class="muted">
        {props.source === 'transcription'
          ? 'Transcribed by the service: no speech was heard.'
          : 'Sent by the client, with no lines.'}
      </p>
    );
  }
  return (
    <>
      <p class="muted">
        {props.source === 'transcription' ? 'Transcribed by the service.' : 'Sent by the client.'}
        {props.onSeek ? ' Click a line to play from there.' : ''}
      </p>
      <ol class="transcript" ref={list}>
        {segments.map((s, i) => (
          <li class={i === active ? 'active' : ''} aria-current={i === active ? 'true' : undefined}>
            {props.onSeek ? (
              <button type="button" class="line" onClick={() => props.onSeek?.(s.start)}>
                <span class="time">{clock(s.start)}</span>
                <span class={`role role-${s.role}`}>{s.role}</span>
                <span class="text">{s.text}</span>
              </button>
            ) : (
              <div class="line">
                <span class="time">{clock(s.start)}</span>
                <span class={`role role-${s.role}`}>{s.role}</span>
                <span class="text">{s.text}</span>
              </div>
            )}
          </li>
        ))}
      </ol>
    </>
  );
}
