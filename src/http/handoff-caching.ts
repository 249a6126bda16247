/**
 * HTTP caching of handoff records (decision 19): a strong ETag per version, If-None-Match answered with
 * 304, and Cache-Control that lets clients keep a final record forever but never a partial one.
 */
import type { FastifyReply } from 'fastify';
import type { Handoff } from '../domain/handoffs/records.ts';
import { sendSerializedOnce } from './serialized-once.ts';

/** Cache-Control of a final record: it never changes again. */
export const FINAL_CACHE_CONTROL = 'private, max-age=31536000, immutable';
/** Cache-Control of a partial record: it may change at any moment. */
export const PARTIAL_CACHE_CONTROL = 'no-store';

/**
 * The ETag: `"<handoff_id>-v<version>"`. Strong, because one version always serializes to the same
 * bytes; the version moves on every change (the database trigger bumps it), so the tag does too.
 */
export function handoffEtag(handoff: Handoff): string {
  return `"${handoff.view.handoff_id}-v${handoff.version}"`;
}

/** The entity tags of an If-None-Match header, without `W/` (it uses the weak comparison), or `*`. */
function tagsOf(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .filter((t) => t.length > 0);
}

/** True when If-None-Match names this ETag (or is `*`): the client's copy is current. */
export function ifNoneMatchMatches(header: string | undefined, etag: string): boolean {
  return tagsOf(header).some((t) => t === '*' || t === etag);
}

/** The versions of this record that If-None-Match names: the copies the client holds. */
export function knownVersions(header: string | undefined, id: string): number[] {
  const prefix = `"${id.toLowerCase()}-v`;
  const versions: number[] = [];
  for (const tag of tagsOf(header)) {
    const lower = tag.toLowerCase();
    if (!lower.startsWith(prefix) || !lower.endsWith('"')) continue;
    const digits = lower.slice(prefix.length, -1);
    if (/^\d{1,15}$/.test(digits)) versions.push(Number(digits));
  }
  return versions;
}

/** Sets ETag and Cache-Control for a record. */
export function setHandoffHeaders(reply: FastifyReply, handoff: Handoff): void {
  reply.header('etag', handoffEtag(handoff));
  if (handoff.view.final) {
    reply.header('cache-control', FINAL_CACHE_CONTROL);
    // A browser's private cache may keep an answer to a request with Authorization, keyed by URL alone: a
    // tab signed in with another company's key would be served this company's record without a request.
    reply.header('vary', 'Authorization');
  } else {
    reply.header('cache-control', PARTIAL_CACHE_CONTROL);
  }
}

/** Answers 304 Not Modified: headers only, no body (not even `null`). */
export function sendNotModified(reply: FastifyReply): FastifyReply {
  return reply.code(304).send();
}

/** Answers a read of `handoff`: its ETag and Cache-Control, then 304 when If-None-Match names it, else it. */
export function answerRead(
  reply: FastifyReply,
  handoff: Handoff,
  ifNoneMatch: string | undefined,
): FastifyReply {
  setHandoffHeaders(reply, handoff);
  if (ifNoneMatchMatches(ifNoneMatch, handoffEtag(handoff))) return sendNotModified(reply);
  return sendSerializedOnce(reply, handoff.view, handoff.view);
}
