/**
 * One call: the recording's player with its waveform, the transcript that follows playback, the analysis
 * with a speech timeline per party, tags, metadata, uploads and linked handoff records.
 */
import type { Ref } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  ApiError,
  type CallDetail,
  getCall,
  LAST_LIST_ITEM,
  type RecordingLink,
  recordingLink,
} from '../api.ts';
import { bytes, formatStart, secs } from '../format.ts';
import { AnalysisView } from '../parts/analysis.tsx';
import { Tags } from '../parts/tags.tsx';
import { Transcript } from '../parts/transcript.tsx';
import { Waveform } from '../parts/waveform.tsx';
import { BASE, onLinkClick } from '../router.ts';

/** Where the reader asked the player to go, and whether to play from there. */
type Wanted = { at: number; play: boolean };

/** Why the recording's link could not be had (the call shows without the player, with a retry). */
type LinkFailure = { message: string; retryAt: number };

/** An error's message, without the `Error: ` of String(error). */
function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The player: <audio> (or <video> for a recording filed as a video) from the signed URL (same origin,
 * ranges), its waveform, and the time it is at. A seek asked while the element has no resource (its URL
 * expired and a new one is on its way) is kept in `wanted` and made once the new source has its metadata.
 */
function usePlayer() {
  const media = useRef<HTMLMediaElement>(null);
  const [time, setTime] = useState(0);
  const [duration, setDuration] = useState(0);
  const wanted = useRef<Wanted | null>(null);
  // While playing, follow the recording each frame (timeupdate alone fires only ~4 times a second).
  useEffect(() => {
    const el = media.current;
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
    const onSeeked = () => {
      onTime();
      if (wanted.current && !wanted.current.play) wanted.current = null;
    };
    const onPlaying = () => {
      wanted.current = null;
    };
    const onMeta = () => setDuration(Number.isFinite(el.duration) ? el.duration : 0);
    el.addEventListener('play', onPlay);
    el.addEventListener('playing', onPlaying);
    el.addEventListener('timeupdate', onTime);
    el.addEventListener('seeked', onSeeked);
    el.addEventListener('loadedmetadata', onMeta);
    return () => {
      cancelAnimationFrame(frame);
      el.removeEventListener('play', onPlay);
      el.removeEventListener('playing', onPlaying);
      el.removeEventListener('timeupdate', onTime);
      el.removeEventListener('seeked', onSeeked);
      el.removeEventListener('loadedmetadata', onMeta);
    };
  });
  /** Goes to `at` (and plays from there): now, or once the element has a resource again. */
  const go = (el: HTMLMediaElement, at: number, play: boolean) => {
    el.currentTime = at;
    if (play) void el.play().catch(() => {});
  };
  const seek = (seconds: number, play = false) => {
    const el = media.current;
    if (!el) return;
    const at = Math.max(0, seconds);
    wanted.current = { at, play };
    setTime(at);
    if (el.error || el.readyState === 0) return;
    go(el, at, play);
  };
  return { media, time, duration, seek, wanted, go };
}

/** Why the recording cannot be played now, with a retry that waits out the service's Retry-After. */
function RetryAlert(props: { lead: string; failure: LinkFailure; loading: boolean; onRetry: () => void }) {
  const { lead, failure, loading, onRetry } = props;
  return (
    <div role="alert" class="error">
      <p>
        {lead}: {failure.message}
        {failure.retryAt > Date.now()
          ? ` (the service asks to wait ${Math.ceil((failure.retryAt - Date.now()) / 1000)} s)`
          : ''}
        .
      </p>
      <button
        type="button"
        aria-disabled={loading}
        onClick={() => {
          if (!loading) onRetry();
        }}
      >
        {loading ? 'Trying again…' : 'Try again'}
      </button>
    </div>
  );
}

/** The call page. */
export function CallPage({ id, onSignedOut }: { id: string; onSignedOut: () => void }) {
  const [call, setCall] = useState<CallDetail | null>(null);
  const [link, setLink] = useState<RecordingLink | null>(null);
  const [linkFailure, setLinkFailure] = useState<LinkFailure | null>(null);
  const [linkLoading, setLinkLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const player = usePlayer();
  // Focus moves to the call's heading when it shows, so a screen reader announces the new page.
  const heading = useRef<HTMLHeadingElement>(null);
  const shown = call !== null;
  useEffect(() => {
    if (shown) heading.current?.focus();
  }, [shown]);

  // The player's source: the signed URL, asked again when the element fails on an expired one.
  const [mediaSrc, setMediaSrc] = useState<string | null>(null);
  const lastRefresh = useRef(0);
  const freshUrl = useRef<string | null>(null);
  const linkRef = useRef<RecordingLink | null>(null);
  // Where the player was while it had a resource (a new source resets currentTime to 0 before failing).
  const lastPosition = useRef(0);
  const onMediaTime = (event: Event) => {
    const el = event.currentTarget as HTMLMediaElement;
    if (el.readyState >= 1) lastPosition.current = el.currentTime;
  };

  // The recording's signed URL. A refusal (429, 503: the service is busy) leaves the call on screen with a
  // retry for the recording; Retry-After is waited out before asking again.
  const fetchLink = async (notBefore = 0) => {
    setLinkLoading(true);
    const wait = notBefore - Date.now();
    if (wait > 0) await new Promise((done) => setTimeout(done, wait));
    try {
      linkRef.current = await recordingLink(id);
      freshUrl.current = linkRef.current?.url ?? null;
      setLink(linkRef.current);
      setLinkFailure(null);
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return onSignedOut();
      const retryAfter = e instanceof ApiError ? e.retryAfter : 0;
      setLinkFailure({ message: messageOf(e), retryAt: Date.now() + retryAfter * 1000 });
    } finally {
      setLinkLoading(false);
    }
  };

  const load = async () => {
    let got: CallDetail;
    try {
      got = await getCall(id);
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return onSignedOut();
      setError(
        e instanceof ApiError && e.status === 404
          ? 'No such call (or not one this key may see).'
          : messageOf(e),
      );
      return;
    }
    // The signed URL is asked only when there is a ready recording, and once (a reload of the call after
    // tagging keeps it); the call shows with it, or with why it could not be had.
    const ready = got.uploads.some((u) => u.status === 'ready');
    if (ready && !linkRef.current) await fetchLink();
    setCall(got);
    document.title = `Call ${got.conversation_id} · Call Quality Service`;
  };
  useEffect(() => {
    void load();
  }, [id]);

  // A signed URL is valid for minutes; a reviewer may pause longer. When the element fails (an expired or
  // refused URL answers 403), ask for a new one and go on: to where the reader last asked (a click on a line
  // that met the expired URL), playing if asked, else where it was. A new URL that fails too is not asked
  // again within 5 s. A renewal refused (429, 503, the network) is shown under the player with a retry,
  // instead of leaving a player that does nothing.
  const [renewFailure, setRenewFailure] = useState<LinkFailure | null>(null);
  const renew = async (notBefore = 0) => {
    const el = player.media.current;
    if (!el) return;
    setLinkLoading(true);
    const wait = notBefore - Date.now();
    if (wait > 0) await new Promise((done) => setTimeout(done, wait));
    let fresh: RecordingLink | null;
    try {
      fresh = await recordingLink(id);
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return onSignedOut();
      const retryAfter = e instanceof ApiError ? e.retryAfter : 0;
      setRenewFailure({ message: messageOf(e), retryAt: Date.now() + retryAfter * 1000 });
      return;
    } finally {
      setLinkLoading(false);
    }
    if (!fresh) {
      setRenewFailure({ message: 'the call has no ready recording any more', retryAt: 0 });
      return;
    }
    setRenewFailure(null);
    freshUrl.current = fresh.url;
    // URLs are signed to the second, so the new one may be the one the page already gave the element (and
    // a new state would change nothing): then it is put back in the element, if something replaced it.
    if ((mediaSrc ?? link?.url) !== fresh.url) setMediaSrc(fresh.url);
    else if (el.getAttribute('src') !== fresh.url) el.src = fresh.url;
  };
  const onMediaError = async () => {
    const el = player.media.current;
    if (!el) return;
    if (el.currentSrc === freshUrl.current && Date.now() - lastRefresh.current < 5000) {
      // The new URL failed too: not the link, the recording itself (storage refused it, or it is damaged).
      setRenewFailure({ message: 'the recording did not load', retryAt: lastRefresh.current + 5000 });
      return;
    }
    lastRefresh.current = Date.now();
    player.wanted.current ??= { at: lastPosition.current, play: !el.paused };
    await renew();
  };
  const onMediaMetadata = () => {
    const el = player.media.current;
    const wanted = player.wanted.current;
    if (el && wanted) player.go(el, wanted.at, wanted.play);
  };

  // The link back: to the list this call was opened from, as it was (Back), else to the last list shown.
  const backToList = (event: MouseEvent) => {
    const plain = event.button === 0 && !event.metaKey && !event.ctrlKey && !event.shiftKey;
    if (plain && (history.state as { fromList?: boolean } | null)?.fromList) {
      event.preventDefault();
      history.back();
    } else onLinkClick(event);
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
  if (!call)
    return (
      <p class="muted" role="status">
        Loading the call…
      </p>
    );
  const roles = call.speaker.channel_map ?? [];
  // What <audio> and <video> share: a recording filed as a video is shown, since a reviewer may need to see it.
  const mediaProps = link
    ? {
        src: mediaSrc ?? link.url,
        controls: true,
        preload: 'metadata' as const,
        onError: onMediaError,
        onLoadedMetadata: onMediaMetadata,
        onTimeUpdate: onMediaTime,
        onSeeked: onMediaTime,
      }
    : undefined;
  const seekAndPlay = link ? (s: number) => player.seek(s, true) : undefined;
  return (
    <article class="call" aria-labelledby="call-title">
      <p>
        <a href={`${BASE}${sessionStorage.getItem(LAST_LIST_ITEM) ?? ''}`} onClick={backToList}>
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
              {/* No <track>: the transcript beside the player is the text of the call. */}
              {link.content_type.startsWith('video/') ? (
                <video
                  ref={player.media as Ref<HTMLVideoElement>}
                  {...mediaProps}
                  class="media video"
                  playsInline
                />
              ) : (
                <audio ref={player.media as Ref<HTMLAudioElement>} {...mediaProps} class="media" />
              )}
              {renewFailure && (
                <RetryAlert
                  lead="The recording link could not be renewed"
                  failure={renewFailure}
                  loading={linkLoading}
                  onRetry={() => void renew(renewFailure.retryAt)}
                />
              )}
              <Waveform
                url={link.url}
                size={link.size}
                roles={roles}
                time={player.time}
                duration={player.duration}
                onSeek={(s) => player.seek(s)}
              />
            </>
          ) : linkFailure ? (
            <RetryAlert
              lead="The recording could not be had"
              failure={linkFailure}
              loading={linkLoading}
              onRetry={() => void fetchLink(linkFailure.retryAt)}
            />
          ) : (
            <p class="muted">
              No playable recording{call.media ? ` (latest upload: ${call.media.status})` : ''}.
            </p>
          )}
          <h2>Analysis</h2>
          <AnalysisView
            analysis={call.analysis}
            time={player.time}
            onSeek={link ? (s) => player.seek(s) : undefined}
          />
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
