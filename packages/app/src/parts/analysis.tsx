/** The call's analysis: the figures a QA reviewer looks at first, and who spoke when, per party. */
import type { CallDetail } from '../api.ts';
import { secs } from '../format.ts';

type Analysis = NonNullable<CallDetail['analysis']>;
const ROLES = ['agent', 'customer', 'unknown'] as const;

/**
 * The speech timeline: one row per party, its speech as bars, the playhead. With a recording, each row is a
 * button: a click seeks to where it is clicked, Enter or Space to the party's next stretch of speech
 * (after the playhead; the first one past the last). Without a recording it is only a picture.
 */
function Timeline(props: { analysis: Analysis; time: number; onSeek?: ((s: number) => void) | undefined }) {
  const speech = props.analysis.speech ?? [];
  const duration = props.analysis.duration_s ?? Math.max(1, ...speech.map((s) => s.stop));
  const roles = ROLES.filter((r) => r !== 'unknown' || speech.some((s) => s.role === 'unknown'));
  const onSeek = props.onSeek;
  return (
    <div class="timeline">
      {roles.map((role) => {
        const own = speech.filter((s) => s.role === role);
        const bars = (
          <>
            {own.map((s) => (
              <span
                class={`speech bg-${role}`}
                style={{
                  left: `${(s.start / duration) * 100}%`,
                  width: `${Math.max(0.2, ((s.stop - s.start) / duration) * 100)}%`,
                }}
              />
            ))}
            <span class="playhead" style={{ left: `${Math.min(100, (props.time / duration) * 100)}%` }} />
          </>
        );
        const summary = `${role} speech: ${own.length} stretches`;
        return (
          <div class="timeline-row">
            <span class={`timeline-label role-${role}`}>{role}</span>
            {onSeek ? (
              <button
                type="button"
                class="timeline-track"
                aria-label={`${summary}; click to seek, Enter for the next one`}
                onClick={(event) => {
                  const target = event.currentTarget as HTMLElement;
                  if (event.detail === 0) {
                    // Enter or Space (a click without a position): the next stretch after the playhead.
                    const next = own.find((s) => s.start > props.time + 0.05) ?? own[0];
                    if (next) onSeek(next.start);
                    return;
                  }
                  const rect = target.getBoundingClientRect();
                  onSeek(((event.clientX - rect.left) / rect.width) * duration);
                }}
              >
                {bars}
              </button>
            ) : (
              <div class="timeline-track" role="img" aria-label={summary}>
                {bars}
              </div>
            )}
          </div>
        );
      })}
    </div>
  );
}

/** The analysis section ("not analysed yet" until there is one). */
export function AnalysisView(props: {
  analysis: CallDetail['analysis'];
  time: number;
  /** Seeks the player; none without a recording (the timeline is then not offered as buttons). */
  onSeek?: ((s: number) => void) | undefined;
}) {
  const a = props.analysis;
  if (!a) return <p class="muted">Not analysed yet.</p>;
  if (a.status === 'pending') return <p class="muted">Analysis in progress…</p>;
  if (a.status === 'failed') return <p class="error">The analysis failed: {a.reason ?? 'no reason given'}</p>;
  const ratio = a.talk_ratio_agent === null ? '—' : `${Math.round(a.talk_ratio_agent * 100)} %`;
  return (
    <>
      <dl class="figures">
        <div>
          <dt>Duration</dt>
          <dd>{secs(a.duration_s)}</dd>
        </div>
        <div>
          <dt>Agent talk</dt>
          <dd>{secs(a.talk_s?.agent)}</dd>
        </div>
        <div>
          <dt>Customer talk</dt>
          <dd>{secs(a.talk_s?.customer)}</dd>
        </div>
        {a.talk_s && a.talk_s.unknown > 0 && (
          <div>
            <dt>Unknown speaker</dt>
            <dd>{secs(a.talk_s.unknown)}</dd>
          </div>
        )}
        <div>
          <dt>Agent talk ratio</dt>
          <dd>{ratio}</dd>
        </div>
        <div>
          <dt>Silence</dt>
          <dd>{secs(a.silence_s)}</dd>
        </div>
        <div>
          <dt>Overtalk</dt>
          <dd>{secs(a.overtalk_s)}</dd>
        </div>
        <div>
          <dt>Longest monologue (agent / customer)</dt>
          <dd>
            {secs(a.longest_monologue_s?.agent)} / {secs(a.longest_monologue_s?.customer)}
          </dd>
        </div>
        <div>
          <dt>Interruptions (agent / customer)</dt>
          <dd>
            {a.interruptions?.agent ?? '—'} / {a.interruptions?.customer ?? '—'}
          </dd>
        </div>
        <div>
          <dt>Source</dt>
          <dd>{a.source}</dd>
        </div>
      </dl>
      {a.speech && a.speech.length > 0 && (
        <>
          <h3>Who spoke when</h3>
          <Timeline analysis={a} time={props.time} onSeek={props.onSeek} />
        </>
      )}
    </>
  );
}
