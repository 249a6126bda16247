/**
 * The calls list: the filters of the list endpoint, kept in the page's query string (a view can be shared
 * as its URL), newest first, a page at a time with the cursor ("Load more"), arrow keys between rows.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type CallFilters, type CallItem, LAST_LIST_ITEM, listCalls, listQuery } from '../api.ts';
import { formatStart, tagText } from '../format.ts';
import { BASE, callUrl, navigate, onLinkClick, setBeforeLeave } from '../router.ts';
import { parseTagFilter, tagFilterText } from '../tag-filter.ts';

const PAGE_SIZE = 50;
const STATES = ['created', 'live', 'stopped'] as const;
const MEDIA = ['none', 'pending', 'uploaded', 'ready', 'rejected', 'expired'] as const;

/** The filters named in a query string (the API's own parameter names). */
export function filtersOf(search: string): CallFilters {
  const params = new URLSearchParams(search);
  const text = (name: string) => params.get(name) || undefined;
  const number = (name: string) => {
    const v = params.get(name);
    return v && /^\d+$/.test(v) ? Number(v) : undefined;
  };
  const filters: Record<string, unknown> = {
    agent_email: text('agent_email'),
    product_id: number('product_id'),
    conversation_id: text('conversation_id'),
    state: text('state'),
    media: text('media'),
    start_time_gte: number('start_time_gte'),
    start_time_lt: number('start_time_lt'),
    limit: number('limit'),
    tag: params.getAll('tag').filter(Boolean),
  };
  for (const [k, v] of Object.entries(filters)) {
    if (v === undefined || (Array.isArray(v) && v.length === 0)) delete filters[k];
  }
  return filters as CallFilters;
}

/**
 * epoch seconds → the value of a datetime-local input (local time, to the second: the inputs have step=1),
 * in the input's normalized form (seconds left out when 0), so an unedited input reads back the same.
 */
function toLocalInput(epoch: number | undefined): string {
  if (epoch === undefined) return '';
  const d = new Date(epoch * 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  const seconds = d.getSeconds() ? `:${pad(d.getSeconds())}` : '';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}${seconds}`;
}

/**
 * The value of a datetime-local input → epoch seconds, or undefined when empty; an input left as it showed
 * `was` keeps it exactly (a local time can name two instants when clocks go back).
 */
function fromLocalInput(value: string, was: number | undefined): number | undefined {
  if (!value) return undefined;
  if (was !== undefined && value === toLocalInput(was)) return was;
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

/** What a list's history entry keeps, so Back to it shows as many rows, scrolled as far. */
type Kept = { key: string; rows: number; scroll: number };

function keptList(): Kept | undefined {
  return (history.state as { list?: Kept } | null)?.list;
}

type Load = { status: 'loading' } | { status: 'error'; message: string } | { status: 'done' };

/** The calls page. */
export function CallsPage({ search, onSignedOut }: { search: string; onSignedOut: () => void }) {
  const filters = filtersOf(search);
  const filterKey = listQuery(filters);
  const [calls, setCalls] = useState<CallItem[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [load, setLoad] = useState<Load>({ status: 'loading' });
  const tbody = useRef<HTMLTableSectionElement>(null);
  const applyButton = useRef<HTMLButtonElement>(null);
  // After an Apply, focus goes to the (re-made) form's Apply button, after a Clear to its first field,
  // rather than to the page's body.
  const focusAfter = useRef<'apply' | 'first' | null>(null);
  const firstField = useRef<HTMLInputElement>(null);
  // After "Load more", focus goes to the first new row; after a Back, the page scrolls where it was.
  const focusRow = useRef<number | null>(null);
  const scrollTo = useRef<number | null>(null);
  // The rows shown are kept in the history entry only once the list has loaded (or restored) them.
  const settled = useRef(false);
  const loading = load.status === 'loading';

  // Only the latest request's answer is shown: a slow page of old filters must not land on new ones.
  // `rows`: pages are fetched until at least that many rows are in (a Back restores what was loaded).
  const generation = useRef(0);
  const fetchPage = async (next: string | null, replace: boolean, rows = 0) => {
    const mine = ++generation.current;
    setLoad({ status: 'loading' });
    try {
      let got: CallItem[] = [];
      let after = next;
      do {
        const page = await listCalls({ limit: PAGE_SIZE, ...filters }, after);
        if (mine !== generation.current) return;
        got = [...got, ...page.calls];
        after = page.next_cursor;
      } while (after && got.length < rows);
      setCalls((old) => (replace ? got : [...old, ...got]));
      setCursor(after);
      setLoad({ status: 'done' });
    } catch (e) {
      if (mine !== generation.current) return;
      if (e instanceof ApiError && e.status === 401) return onSignedOut();
      setLoad({ status: 'error', message: e instanceof Error ? e.message : String(e) });
      scrollTo.current = focusRow.current = null;
    }
  };

  // Keeps the rows loaded and the scroll in this list's history entry (read back by a Back to it).
  const keep = () => {
    if (!settled.current) return;
    const list: Kept = { key: filterKey, rows: calls.length, scroll: Math.round(scrollY) };
    history.replaceState({ ...(history.state as object | null), list }, '');
  };
  const keepRef = useRef(keep);
  keepRef.current = keep;

  // A new set of filters starts the list again from its first page; a Back to a list loads as many rows
  // as it had and scrolls where it was.
  useEffect(() => {
    sessionStorage.setItem(LAST_LIST_ITEM, filterKey ? `?${filterKey}` : '');
    document.title = 'Calls · Call Quality Service';
    setCalls([]);
    setCursor(null);
    settled.current = false;
    const kept = keptList();
    const restore = kept?.key === filterKey ? kept : undefined;
    scrollTo.current = restore ? restore.scroll : null;
    void fetchPage(null, true, restore?.rows ?? 0);
    if (focusAfter.current) {
      (focusAfter.current === 'apply' ? applyButton : firstField).current?.focus();
      focusAfter.current = null;
    }
    // Before the app leaves this entry (a call opened), and when scrolling stops, the entry is updated.
    setBeforeLeave(() => keepRef.current());
    let timer = 0;
    const onScroll = () => {
      clearTimeout(timer);
      timer = window.setTimeout(() => keepRef.current(), 200);
    };
    addEventListener('scroll', onScroll, { passive: true });
    return () => {
      clearTimeout(timer);
      removeEventListener('scroll', onScroll);
      setBeforeLeave(null);
    };
  }, [filterKey]);

  // Once rows are in: scroll back where a Back left off, move focus to the first new row after "Load
  // more", and keep the count in the history entry.
  useEffect(() => {
    if (load.status !== 'done') return;
    if (scrollTo.current !== null) window.scrollTo(0, scrollTo.current);
    scrollTo.current = null;
    if (focusRow.current !== null) {
      tbody.current?.querySelectorAll<HTMLAnchorElement>('a.row-link')[focusRow.current]?.focus();
      focusRow.current = null;
    }
    settled.current = true;
    keep();
  }, [calls, load.status]);

  const loadMore = () => {
    if (loading || !cursor) return;
    focusRow.current = calls.length;
    void fetchPage(cursor, false);
  };

  const apply = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const get = (name: string) => String(form.get(name) ?? '').trim();
    const next: Record<string, unknown> = {
      agent_email: get('agent_email') || undefined,
      product_id: get('product_id') || undefined,
      state: get('state') || undefined,
      media: get('media') || undefined,
      start_time_gte: fromLocalInput(get('from'), filters.start_time_gte),
      start_time_lt: fromLocalInput(get('to'), filters.start_time_lt),
      limit: filters.limit,
      conversation_id: get('conversation_id') || undefined,
      tag: parseTagFilter(get('tag')),
    };
    const query = listQuery(next as CallFilters);
    // The same filters again: the list is fetched again. Others: a new history entry (Back returns here).
    if (query === filterKey) return void fetchPage(null, true);
    focusAfter.current = 'apply';
    navigate(`${BASE}${query ? `?${query}` : ''}`);
  };

  // Clear goes to the unfiltered list; the form is made again, so focus is put back in it.
  const clear = (event: MouseEvent) => {
    onLinkClick(event);
    if (event.defaultPrevented && filterKey) focusAfter.current = 'first';
  };

  // Up and down arrows move between the rows' links; Enter follows the focused one.
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
    const links = [...(tbody.current?.querySelectorAll<HTMLAnchorElement>('a.row-link') ?? [])];
    const at = links.indexOf(document.activeElement as HTMLAnchorElement);
    const to = event.key === 'ArrowDown' ? Math.min(links.length - 1, at + 1) : Math.max(0, at - 1);
    links[to]?.focus();
    event.preventDefault();
  };

  return (
    <section aria-labelledby="calls-title">
      <h1 id="calls-title">Calls</h1>
      <form class="filters" onSubmit={apply} aria-label="Filters" key={filterKey}>
        <label>
          Agent email
          <input ref={firstField} name="agent_email" type="email" defaultValue={filters.agent_email ?? ''} />
        </label>
        <label>
          Product id
          <input
            name="product_id"
            inputMode="numeric"
            pattern="[0-9]*"
            defaultValue={String(filters.product_id ?? '')}
          />
        </label>
        <label>
          Conversation id
          <input name="conversation_id" defaultValue={filters.conversation_id ?? ''} />
        </label>
        <label>
          State
          <select name="state">
            <option value="">any</option>
            {STATES.map((s) => (
              <option value={s} selected={filters.state === s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Media
          <select name="media">
            <option value="">any</option>
            {MEDIA.map((s) => (
              <option value={s} selected={filters.media === s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          From
          <input
            name="from"
            type="datetime-local"
            step={1}
            defaultValue={toLocalInput(filters.start_time_gte)}
          />
        </label>
        <label>
          Until
          <input
            name="to"
            type="datetime-local"
            step={1}
            defaultValue={toLocalInput(filters.start_time_lt)}
          />
        </label>
        <label>
          Tags (key or key:value)
          <input
            name="tag"
            defaultValue={tagFilterText([filters.tag ?? []].flat())}
            placeholder='sale_closed:true queue:"customer care"'
          />
        </label>
        <div class="filter-actions">
          <button type="submit" ref={applyButton}>
            Apply
          </button>
          <a href={BASE} onClick={clear} class="button secondary">
            Clear
          </a>
        </div>
      </form>

      {load.status === 'error' && (
        <p role="alert" class="error">
          Could not load calls: {load.message}
        </p>
      )}
      <table class="calls" aria-busy={load.status === 'loading'} aria-describedby="calls-hint">
        <caption id="calls-hint" class="muted">
          Newest first. Up and down arrows move between calls; Enter opens one.
        </caption>
        <thead>
          <tr>
            <th scope="col" aria-sort="descending">
              Start
            </th>
            <th scope="col">Agent</th>
            <th scope="col">Conversation</th>
            <th scope="col">State</th>
            <th scope="col">Media</th>
            <th scope="col">Transcript</th>
            <th scope="col">Tags</th>
          </tr>
        </thead>
        <tbody ref={tbody} onKeyDown={onKeyDown}>
          {calls.map((call) => (
            <tr key={call.id}>
              <td>
                <a
                  class="row-link"
                  href={callUrl(call.id)}
                  onClick={(e) => onLinkClick(e, { fromList: true })}
                >
                  {formatStart(call.start_time)}
                </a>
              </td>
              <td>{call.agent.email}</td>
              <td class="mono">{call.conversation_id}</td>
              <td>
                <span class={`badge state-${call.state}`}>{call.state}</span>
              </td>
              <td>
                {call.media ? (
                  <span class={`badge media-${call.media.status}`}>{call.media.status}</span>
                ) : (
                  'none'
                )}
              </td>
              <td>{call.has_transcript ? 'yes' : 'no'}</td>
              <td>
                {call.tags.map((t) => (
                  <span class="tag">{tagText(t)}</span>
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {load.status === 'loading' && (
        <p class="muted" role="status">
          Loading calls…
        </p>
      )}
      {load.status === 'done' && calls.length === 0 && (
        <p class="empty" role="status">
          {filterKey
            ? 'No calls match these filters.'
            : 'No calls yet: they arrive through the API (call/create, or cqs calls upload).'}
        </p>
      )}
      {/* Kept while the next page loads (aria-disabled, not disabled: the focus stays on it). */}
      {cursor && (
        <button type="button" class="load-more" aria-disabled={loading} onClick={loadMore}>
          Load more
        </button>
      )}
      {!cursor && load.status === 'done' && calls.length > 0 && (
        <p class="muted">
          {calls.length} call{calls.length === 1 ? '' : 's'}, all shown.
        </p>
      )}
    </section>
  );
}
