/** A tiny router over the History API: /app/ is the calls list, /app/calls/ID one call. */
import { useEffect, useState } from 'preact/hooks';

/** Where the app is mounted (the build's base). */
export const BASE = '/app/';

/** The page the current URL names. */
export type Route = { page: 'calls' } | { page: 'call'; id: string };

/** Reads the route from a location. */
export function routeOf(location: Location): Route {
  const rest = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : '';
  const match = /^calls\/([^/]+)$/.exec(rest);
  return match?.[1] ? { page: 'call', id: decodeURIComponent(match[1]) } : { page: 'calls' };
}

/** Called before the app leaves the current history entry, to keep its state in it (the list's rows). */
let beforeLeave: (() => void) | null = null;

/** Sets what runs before the app leaves the current entry (null: nothing); the page that sets it clears it. */
export function setBeforeLeave(fn: (() => void) | null): void {
  beforeLeave = fn;
}

/**
 * Goes to a URL of the app without reloading: a new history entry (so Back returns here), with `state` in
 * it; `replace` keeps the entry instead.
 */
export function navigate(url: string, replace = false, state: unknown = null): void {
  beforeLeave?.();
  if (replace) history.replaceState(state, '', url);
  else history.pushState(state, '', url);
  dispatchEvent(new PopStateEvent('popstate'));
}

/** The current location, re-read on every navigation. */
export function useLocation(): Location {
  const [, setTick] = useState(0);
  useEffect(() => {
    const onPop = () => setTick((n) => n + 1);
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);
  return location;
}

/** The URL of a call's page. */
export function callUrl(id: string): string {
  return `${BASE}calls/${encodeURIComponent(id)}`;
}

/** Follows a same-app link without a reload (a modified click opens a tab as usual). */
export function onLinkClick(event: MouseEvent, state: unknown = null): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey)
    return;
  const anchor = (event.currentTarget as HTMLAnchorElement | null) ?? null;
  if (!anchor?.href) return;
  event.preventDefault();
  navigate(anchor.href, false, state);
}
