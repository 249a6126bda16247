/** Parsing `--tag key=value:type` (type string, integer or boolean; string when omitted). */
import type { Tag } from '../../packages/client/src/index.ts';
import { CliError } from './output.ts';

/** One tag from `key=value[:type]`; the key ends at the first `=`, the type follows the last `:`. */
export function parseTag(text: string): Tag {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new CliError(`--tag must be key=value[:type]: ${text}`, 2);
  const key = text.slice(0, eq);
  let value = text.slice(eq + 1);
  let type = 'string';
  const colon = value.lastIndexOf(':');
  const suffix = colon >= 0 ? value.slice(colon + 1) : '';
  if (suffix === 'string' || suffix === 'integer' || suffix === 'boolean') {
    type = suffix;
    value = value.slice(0, colon);
  }
  if (type === 'integer') {
    if (!/^-?\d+$/.test(value)) throw new CliError(`--tag ${key}: not an integer: ${value}`, 2);
    return { key, value: Number(value), type: 'integer' };
  }
  if (type === 'boolean') {
    if (value !== 'true' && value !== 'false') throw new CliError(`--tag ${key}: not true or false`, 2);
    return { key, value: value === 'true', type: 'boolean' };
  }
  return { key, value, type: 'string' };
}

/** Commander collector for a repeated --tag. */
export function collectTag(text: string, previous: Tag[] = []): Tag[] {
  return [...previous, parseTag(text)];
}
