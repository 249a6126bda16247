/**
 * The calls list: the filters of the list endpoint, kept in the page's query string (a view can be shared
 * as its URL), newest first, a page at a time with the cursor ("Load more"), arrow keys between rows.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type CallFilters, type CallItem, listCalls, listQuery } from '../api.ts';
import { formatStart, tagText } from '../format.ts';
import { BASE, callUrl, navigate, onLinkClick } from '../router.ts';
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

/** epoch seconds → the value of a datetime-local input (local time). */
function toLocalInput(epoch: number | undefined): string {
  if (epoch === undefined) return '';
  const d = new Date(epoch * 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The value of a datetime-local input → epoch seconds, or undefined when empty. */
function fromLocalInput(value: string): number | undefined {
  if (!value) return undefined;
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
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

  // Only the latest request's answer is shown: a slow page of old filters must not land on new ones.
  const generation = useRef(0);
  const fetchPage = async (next: string | null, replace: boolean) => {
    const mine = ++generation.current;
    setLoad({ status: 'loading' });
    try {
      const page = await listCalls({ limit: PAGE_SIZE, ...filters }, next);
      if (mine !== generation.current) return;
      setCalls((old) => (replace ? page.calls : [...old, ...page.calls]));
      setCursor(page.next_cursor);
      setLoad({ status: 'done' });
    } catch (e) {
      if (mine !== generation.current) return;
      if (e instanceof ApiError && e.status === 401) return onSignedOut();
      setLoad({ status: 'error', message: e instanceof Error ? e.message : String(e) });
    }
  };

  // A new set of filters starts the list again from its first page.
  useEffect(() => {
    sessionStorage.setItem('cqs.lastList', filterKey ? `?${filterKey}` : '');
    document.title = 'Calls · Call Quality Service';
    setCalls([]);
    setCursor(null);
    void fetchPage(null, true);
  }, [filterKey]);

  const apply = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const get = (name: string) => String(form.get(name) ?? '').trim();
    const next: Record<string, unknown> = {
      agent_email: get('agent_email') || undefined,
      product_id: get('product_id') || undefined,
      state: get('state') || undefined,
      media: get('media') || undefined,
      start_time_gte: fromLocalInput(get('from')),
      start_time_lt: fromLocalInput(get('to')),
      limit: filters.limit,
      conversation_id: get('conversation_id') || undefined,
      tag: parseTagFilter(get('tag')),
    };
    const query = listQuery(next as CallFilters);
    navigate(`${BASE}${query ? `?${query}` : ''}`, true);
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
          <input name="agent_email" type="email" value={filters.agent_email ?? ''} />
        </label>
        <label>
          Product id
          <input name="product_id" inputMode="numeric" pattern="[0-9]*" value={filters.product_id ?? ''} />
        </label>
        <label>
          Conversation id
          <input name="conversation_id" value={filters.conversation_id ?? ''} />
        </label>
        <label>
          State
          <select name="state" value={filters.state ?? ''}>
            <option value="">any</option>
            {STATES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          Media
          <select name="media" value={filters.media ?? ''}>
            <option value="">any</option>
            {MEDIA.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          From
          <input name="from" type="datetime-local" value={toLocalInput(filters.start_time_gte)} />
        </label>
        <label>
          Until
          <input name="to" type="datetime-local" value={toLocalInput(filters.start_time_lt)} />
        </label>
        <label>
          Tags (key or key:value)
          <input
            name="tag"
            value={tagFilterText([filters.tag ?? []].flat())}
            placeholder='sale_closed:true queue:"customer care"'
          />
        </label>
        <div class="filter-actions">
          <button type="submit">Apply</button>
          <a href={BASE} onClick={onLinkClick} class="button secondary">
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
                <a class="row-link" href={callUrl(call.id)} onClick={onLinkClick}>
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
      {cursor && load.status !== 'loading' && (
        <button type="button" class="load-more" onClick={() => fetchPage(cursor, false)}>
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
