/** How the app writes times, durations and tags. */
import type { Tag } from './api.ts';

/** An epoch-seconds start time, in the reader's locale and time zone. */
export function formatStart(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toLocaleString(undefined, {
    dateStyle: 'medium',
    timeStyle: 'short',
  });
}

/** Seconds as m:ss (or h:mm:ss). */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** Seconds with one decimal, or a dash. */
export function secs(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${value.toFixed(1)} s`;
}

/** A tag as `key: value`. */
export function tagText(tag: Tag): string {
  return `${tag.key}: ${String(tag.value)}`;
}

/** Bytes in KB/MB. */
export function bytes(n: number | null): string {
  if (n === null) return '—';
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
