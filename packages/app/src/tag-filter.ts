/**
 * The calls page's tag filter box: the list's `tag` filters (`key` or `key:value`) as one line of text and
 * back. Filters are separated by spaces or commas; a key or value that holds either (or a quote) is quoted,
 * so `queue:"customer care"` stays one filter, and what the box shows is read back as the same filters.
 */

const TOKEN = /(?:[^\s,"]+|"(?:[^"\\]|\\.)*"?)+/g;

/** Removes a token's quotes, keeping what they hold (`\"` and `\\` unescaped). */
function unquote(token: string): string {
  return token.replace(/"((?:[^"\\]|\\.)*)"?/g, (_, inner: string) => inner.replace(/\\(.)/g, '$1'));
}

/** The filters typed in the box. */
export function parseTagFilter(text: string): string[] {
  return (text.match(TOKEN) ?? []).map(unquote).filter(Boolean);
}

/**
 * The box's text for the filters: each one whole, its key and its value each quoted when it needs to be
 * (`"my key":val` is one filter; `my key:"val"` would read back as two).
 */
export function tagFilterText(filters: readonly string[]): string {
  const special = (s: string) => /[\s,"]/.test(s);
  const quote = (s: string) => (special(s) ? `"${s.replace(/["\\]/g, '\\$&')}"` : s);
  return filters
    .map((filter) => {
      const colon = filter.indexOf(':');
      return colon < 0 ? quote(filter) : `${quote(filter.slice(0, colon))}:${quote(filter.slice(colon + 1))}`;
    })
    .join(' ');
}
