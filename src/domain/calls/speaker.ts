/** Speaker separation of call/create (spec 2.4) and the deprecated `channels` field (decisions 1 and 4). */
import { ValidationError } from '../errors.ts';

/** A speaker role of a channel or a segment. */
export type Role = 'agent' | 'customer';
/** The speaker object as sent. */
export interface SpeakerInput {
  separation?: 'diarize' | 'channels';
  channel_map?: Role[];
}
/** What is stored: the separation, and the [left, right] roles when channels are mapped. */
export interface SpeakerPlan {
  separation: 'diarize' | 'channels';
  channelMap: Role[] | null;
}

function checkOrder(map: readonly Role[], field: string): void {
  if (map.length !== 2 || map[0] === map[1]) {
    throw new ValidationError('must be ["agent", "customer"] or ["customer", "agent"]', field);
  }
}

const sameMap = (a: readonly Role[], b: readonly Role[]) => a[0] === b[0] && a[1] === b[1];

/** The speaker setting of a create request; undefined when it sends neither speaker nor channels. */
export function planSpeaker(
  speaker: SpeakerInput | undefined,
  channels: Role[] | undefined,
): SpeakerPlan | undefined {
  if (speaker?.channel_map) checkOrder(speaker.channel_map, 'speaker.channel_map');
  if (channels) {
    checkOrder(channels, 'channels');
    // `channels` means {separation: channels, channel_map: channels}; a speaker may repeat it, not contradict it.
    if (speaker?.separation === 'diarize') {
      throw new ValidationError(
        'means separation "channels", but speaker.separation is "diarize"',
        'channels',
      );
    }
    if (speaker?.channel_map && !sameMap(speaker.channel_map, channels)) {
      throw new ValidationError('differs from speaker.channel_map; send only speaker', 'channels');
    }
    return { separation: 'channels', channelMap: channels };
  }
  if (!speaker) return undefined;
  const separation = speaker.separation ?? 'diarize';
  // A channel_map with diarization has no effect (decision 4), so it is not kept.
  return { separation, channelMap: separation === 'channels' ? (speaker.channel_map ?? null) : null };
}
