/** The schema of a call's `analysis` (decision 28), as GET /api/v1/calls/{id} shows it. */
import { Type } from 'typebox';

const Seconds = (description: string) =>
  Type.Number({ minimum: 0, description: `${description}, in seconds.` });
const OrNull = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);
const PerRole = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T, description: string) =>
  OrNull(
    Type.Object(
      { agent: OrNull(schema), customer: OrNull(schema) },
      { additionalProperties: false, description },
    ),
  );

/** An example of a ready analysis (the timeline drawn in docs/analysis.md). */
export const ANALYSIS_EXAMPLE = {
  status: 'ready',
  reason: null,
  source: 'recording',
  duration_s: 20,
  talk_s: { agent: 12, customer: 6.5, unknown: 0 },
  silence_s: 4,
  overtalk_s: 2.5,
  talk_ratio_agent: 0.649,
  longest_monologue_s: { agent: 8, customer: 2.5 },
  interruptions: { agent: 1, customer: 2 },
  speech: [
    { role: 'agent', start: 0, stop: 9 },
    { role: 'customer', start: 8, stop: 10.5 },
    { role: 'customer', start: 12, stop: 14 },
    { role: 'agent', start: 13, stop: 16 },
    { role: 'customer', start: 15.5, stop: 17.5 },
  ],
};

/** A call's analysis; its figures are null while `pending` or when `failed`. */
export const CallAnalysis = Type.Object(
  {
    status: Type.Enum(['pending', 'ready', 'failed']),
    reason: OrNull(Type.String({ description: 'Why the analysis failed.' })),
    source: Type.Enum(['recording', 'transcript'], {
      description: 'The latest ready recording, or the transcript when the call has none.',
    }),
    duration_s: OrNull(Seconds('Length of the recording (or up to the last segment’s stop)')),
    talk_s: OrNull(
      Type.Object(
        {
          agent: OrNull(Type.Number()),
          customer: OrNull(Type.Number()),
          unknown: Type.Number({ description: 'Speech of no known role (mono, or channels without a map).' }),
        },
        { additionalProperties: false, description: 'Speech per role, pauses under 0.3 s bridged.' },
      ),
    ),
    silence_s: OrNull(Seconds('Time when no one speaks')),
    overtalk_s: OrNull(Seconds('Time when both speak; null for a mono recording')),
    talk_ratio_agent: OrNull(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description: 'agent / (agent + customer); null when both are 0.',
      }),
    ),
    longest_monologue_s: PerRole(
      Type.Number(),
      'Longest uninterrupted run of a role’s speech, gaps under 1 s bridged, cut where the other role starts.',
    ),
    interruptions: PerRole(Type.Integer(), 'Starts of a role’s speech while the other role speaks.'),
    speech: OrNull(
      Type.Array(
        Type.Object(
          {
            role: Type.Enum(['agent', 'customer', 'unknown']),
            start: Type.Number(),
            stop: Type.Number(),
          },
          { additionalProperties: false },
        ),
        { description: 'Who spoke when, by start.' },
      ),
    ),
  },
  {
    additionalProperties: false,
    description:
      'The call’s analysis: who spoke when, and the talk, silence, overtalk, ratio, monologue and interruption figures made of it. Made from the latest ready recording, or from the transcript when the call has none and every segment has times.',
    examples: [ANALYSIS_EXAMPLE],
  },
);
