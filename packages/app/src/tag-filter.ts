/**
 * The calls page's tag filter box: the list's `tag` filters (`key` or `key:value`) as one line of text and
 * back. Filters are separated by spaces or commas; a value that holds either (or a quote) is quoted, so
 * `queue:"customer care"` stays one filter, and what the box shows is read back as the same filters.
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

/** The box's text for the filters: each one whole, its value quoted when it needs to be. */
export function tagFilterText(filters: readonly string[]): string {
  return filters
    .map((filter) => {
      if (!/[\s,"]/.test(filter)) return filter;
      const colon = filter.indexOf(':');
      const quote = (s: string) => `"${s.replace(/["\\]/g, '\\$&')}"`;
      return colon < 0 ? quote(filter) : `${filter.slice(0, colon + 1)}${quote(filter.slice(colon + 1))}`;
    })
    .join(' ');
}
