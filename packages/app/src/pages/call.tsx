/**
 * One call: the recording's player with its waveform, the transcript that follows playback, the analysis
 * with a speech timeline per party, tags, metadata, uploads and linked handoff records.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type CallDetail, getCall, type RecordingLink, recordingLink } from '../api.ts';
import { bytes, formatStart, secs } from '../format.ts';
import { AnalysisView } from '../parts/analysis.tsx';
import { Tags } from '../parts/tags.tsx';
import { Transcript } from '../parts/transcript.tsx';
import { Waveform } from '../parts/waveform.tsx';
import { BASE, onLinkClick } from '../router.ts';

type Loaded = { call: CallDetail; link: RecordingLink | null };

/** The player: <audio> from the signed URL (same origin, ranges), its waveform, and the time it is at. */
function usePlayer() {
  const audio = useRef<HTMLAudioElement>(null);
  const [time, setTime] = useState(0);
  const [duration, setDuration] = useState(0);
  // While playing, follow the audio each frame (timeupdate alone fires only ~4 times a second).
  useEffect(() => {
    const el = audio.current;
    if (!el) return;
    let frame = 0;
    const tick = () => {
      setTime(el.currentTime);
      if (!el.paused) frame = requestAnimationFrame(tick);
    };
    const onPlay = () => {
      frame = requestAnimationFrame(tick);
    };
    const onTime = () => setTime(el.currentTime);
    const onMeta = () => setDuration(Number.isFinite(el.duration) ? el.duration : 0);
    el.addEventListener('play', onPlay);
    el.addEventListener('timeupdate', onTime);
    el.addEventListener('seeked', onTime);
    el.addEventListener('loadedmetadata', onMeta);
    return () => {
      cancelAnimationFrame(frame);
      el.removeEventListener('play', onPlay);
      el.removeEventListener('timeupdate', onTime);
      el.removeEventListener('seeked', onTime);
      el.removeEventListener('loadedmetadata', onMeta);
    };
  });
  const seek = (seconds: number, play = false) => {
    const el = audio.current;
    if (!el) return;
    el.currentTime = Math.max(0, seconds);
    setTime(el.currentTime);
    if (play) void el.play().catch(() => {});
  };
  return { audio, time, duration, seek };
}

/** The call page. */
export function CallPage({ id, onSignedOut }: { id: string; onSignedOut: () => void }) {
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [error, setError] = useState<string | null>(null);
  const player = usePlayer();
  // Focus moves to the call's heading when it shows, so a screen reader announces the new page.
  const heading = useRef<HTMLHeadingElement>(null);
  const shown = loaded !== null;
  useEffect(() => {
    if (shown) heading.current?.focus();
  }, [shown]);

  // The player's source: the signed URL, asked again when the element fails on an expired one.
  const [audioSrc, setAudioSrc] = useState<string | null>(null);
  const resumeAt = useRef<number | null>(null);
  const lastRefresh = useRef(0);
  const linkRef = useRef<RecordingLink | null>(null);
  // Where the player was while it had a resource (a new source resets currentTime to 0 before failing).
  const lastPosition = useRef(0);
  const onAudioTime = (event: Event) => {
    const el = event.currentTarget as HTMLAudioElement;
    if (el.readyState >= 1) lastPosition.current = el.currentTime;
  };

  const load = async () => {
    try {
      const call = await getCall(id);
      // The signed URL is asked only when there is a ready recording, and once (a reload of the call
      // after tagging keeps it).
      const ready = call.uploads.some((u) => u.status === 'ready');
      if (ready && !linkRef.current) {
        linkRef.current = await recordingLink(id);
        setAudioSrc(linkRef.current?.url ?? null);
      }
      const link = linkRef.current;
      setLoaded({ call, link });
      document.title = `Call ${call.conversation_id} · Call Quality Service`;
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return onSignedOut();
      setError(
        e instanceof ApiError && e.status === 404 ? 'No such call (or not one this key may see).' : String(e),
      );
    }
  };
  useEffect(() => {
    void load();
  }, [id]);

  // A signed URL is valid for minutes; a reviewer may pause longer. When the element fails (an expired or
  // refused URL answers 403), ask for a new one (at most every 5 s) and go on from the same place.
  const onAudioError = async () => {
    if (Date.now() - lastRefresh.current < 5000) return;
    lastRefresh.current = Date.now();
    resumeAt.current = lastPosition.current;
    const fresh = await recordingLink(id).catch(() => null);
    if (fresh) setAudioSrc(fresh.url);
  };
  const onAudioMetadata = () => {
    const el = player.audio.current;
    if (el && resumeAt.current !== null) {
      el.currentTime = resumeAt.current;
      resumeAt.current = null;
    }
  };

  if (error)
    return (
      <section>
        <p>
          <a href={BASE} onClick={onLinkClick}>
            ← Calls
          </a>
        </p>
        <p role="alert" class="error">
          {error}
        </p>
      </section>
    );
  if (!loaded)
    return (
      <p class="muted" role="status">
        Loading the call…
      </p>
    );
  const { call, link } = loaded;
  const roles = call.speaker.channel_map ?? [];
  const seekAndPlay = link ? (s: number) => player.seek(s, true) : undefined;
  return (
    <article class="call" aria-labelledby="call-title">
      <p>
        <a href={`${BASE}${sessionStorage.getItem('cqs.lastList') ?? ''}`} onClick={onLinkClick}>
          ← Calls
        </a>
      </p>
      <h1 id="call-title" ref={heading} tabIndex={-1}>
        Call <span class="mono">{call.conversation_id}</span>
      </h1>
      <p class="summary">
        {formatStart(call.start_time)} · agent {call.agent.email} · product {call.product_id ?? '—'} ·{' '}
        <span class={`badge state-${call.state}`}>{call.state}</span>
      </p>

      <div class="call-grid">
        <section aria-labelledby="player-title" class="player">
          <h2 id="player-title">Recording</h2>
          {link ? (
            <>
              {/* biome-ignore lint/a11y/useMediaCaption: the transcript beside the player is the text of the call */}
              <audio
                ref={player.audio}
                src={audioSrc ?? link.url}
                controls
                preload="metadata"
                class="audio"
                onError={onAudioError}
                onLoadedMetadata={onAudioMetadata}
                onTimeUpdate={onAudioTime}
                onSeeked={onAudioTime}
              />
              <Waveform
                url={link.url}
                size={link.size}
                roles={roles}
                time={player.time}
                duration={player.duration}
                onSeek={(s) => player.seek(s)}
              />
            </>
          ) : (
            <p class="muted">
              No playable recording{call.media ? ` (latest upload: ${call.media.status})` : ''}.
            </p>
          )}
          <h2>Analysis</h2>
          <AnalysisView analysis={call.analysis} time={player.time} onSeek={(s) => player.seek(s)} />
        </section>
        <section aria-labelledby="transcript-title" class="transcript-pane">
          <h2 id="transcript-title">Transcript</h2>
          <Transcript
            segments={call.transcript}
            source={call.transcript_source}
            time={player.time}
            onSeek={seekAndPlay}
          />
        </section>
      </div>

      <section aria-labelledby="tags-title">
        <h2 id="tags-title">Tags</h2>
        <Tags call={call} onChanged={load} />
      </section>

      <section aria-labelledby="meta-title">
        <h2 id="meta-title">Details</h2>
        <dl class="details">
          <dt>Call id</dt>
          <dd class="mono">{call.id}</dd>
          <dt>Speakers</dt>
          <dd>
            {call.speaker.separation}
            {call.speaker.channel_map ? ` (channels: ${call.speaker.channel_map.join(', ')})` : ''}
          </dd>
          <dt>Created / updated</dt>
          <dd>
            {new Date(call.created_at).toLocaleString()} / {new Date(call.updated_at).toLocaleString()}
          </dd>
          <dt>Handoff records</dt>
          <dd>
            {call.handoff_ids.length === 0
              ? 'none'
              : call.handoff_ids.map((h) => (
                  <span class="mono handoff" key={h}>
                    {h}
                  </span>
                ))}
          </dd>
        </dl>
        <h3>Metadata</h3>
        {Object.keys(call.metadata).length === 0 ? (
          <p class="muted">No metadata.</p>
        ) : (
          <pre class="metadata">{JSON.stringify(call.metadata, null, 2)}</pre>
        )}
      </section>

      <section aria-labelledby="uploads-title">
        <h2 id="uploads-title">Uploads</h2>
        {call.uploads.length === 0 ? (
          <p class="muted">No uploads.</p>
        ) : (
          <table class="uploads">
            <thead>
              <tr>
                <th scope="col">Upload</th>
                <th scope="col">File</th>
                <th scope="col">Status</th>
                <th scope="col">Reason</th>
                <th scope="col">Size</th>
                <th scope="col">Duration</th>
                <th scope="col">Channels</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {call.uploads.map((u) => (
                <tr key={u.upload_id}>
                  <td>{u.upload_id}</td>
                  <td>
                    {u.filename} <span class="muted">({u.content_type})</span>
                  </td>
                  <td>
                    <span class={`badge media-${u.status}`}>{u.status}</span>
                  </td>
                  <td>{u.reason ?? '—'}</td>
                  <td>{bytes(u.size)}</td>
                  <td>{secs(u.duration_s)}</td>
                  <td>{u.channels ?? '—'}</td>
                  <td>{new Date(u.created_at).toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </article>
  );
}
