import { useCallback, useEffect, useState } from 'preact/hooks';
import type { Api } from '../api.ts';
import { ApiError } from '../api.ts';
import { Link } from '../link.tsx';
import { openFeed } from '../live/feed.ts';
import { formatCost, formatDateTime, formatDuration } from './format.ts';
import { isLive, LIVE_STATUSES, type CallView } from './types.ts';

/**
 * /console/calls: the account's calls, newest first, with filters and paging; calls still going
 * on are listed on top and follow the live call feed (and refresh when the tab gets focus).
 */

const PAGE = 25;
const STATUSES = ['completed', 'in-progress', 'ringing', 'queued', 'busy', 'no-answer', 'declined', 'invalid-number', 'failed', 'canceled'];

interface Filters {
  status: string;
  direction: string;
  assistant: string;
  from: string;
  to: string;
}

const EMPTY: Filters = { status: '', direction: '', assistant: '', from: '', to: '' };

function query(f: Filters, offset: number): string {
  const q = new URLSearchParams({ limit: String(PAGE), offset: String(offset) });
  if (f.status) q.set('status', f.status);
  if (f.direction) q.set('direction', f.direction);
  if (f.assistant) q.set('assistant_id', f.assistant);
  if (f.from) q.set('from', f.from);
  if (f.to) q.set('to', f.to);
  return q.toString();
}

export function CallsList(props: { api: Api }) {
  const { api } = props;
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [offset, setOffset] = useState(0);
  const [calls, setCalls] = useState<CallView[] | null>(null);
  const [live, setLive] = useState<CallView[]>([]);
  const [assistants, setAssistants] = useState<Array<{ id: number; name: string }>>([]);
  const [error, setError] = useState<string | null>(null);
  const [feed, setFeed] = useState<'connected' | 'offline'>('offline');

  const showError = (err: unknown) =>
    setError(err instanceof ApiError ? Object.values(err.fieldErrors).flat().join(' ') || err.message : String(err));

  // Each request counts against the key's rate limit: a filter change asks for the page only.
  const loadPage = useCallback(async () => {
    try {
      setCalls(await api.get<CallView[]>(`/user/calls?${query(filters, offset)}`));
      setError(null);
    } catch (err) {
      showError(err);
    }
  }, [api, filters, offset]);

  const loadLive = useCallback(async () => {
    try {
      setLive(await api.get<CallView[]>(`/user/calls?limit=100&status=${LIVE_STATUSES.join(',')}`));
    } catch (err) {
      showError(err);
    }
  }, [api]);

  useEffect(() => {
    void loadPage();
  }, [loadPage]);
  useEffect(() => {
    void loadLive();
  }, [loadLive]);

  useEffect(() => {
    api
      .get<{ assistants: Array<{ id: number; name: string }> }>('/user/assistants')
      .then((r) => setAssistants(r.assistants))
      .catch(() => setAssistants([]));
  }, [api]);

  // Back to the tab: what changed meanwhile (the feed may not be there).
  useEffect(() => {
    const onFocus = () => {
      void loadPage();
      void loadLive();
    };
    addEventListener('focus', onFocus);
    return () => removeEventListener('focus', onFocus);
  }, [loadPage, loadLive]);

  useEffect(() => {
    const ctl = new AbortController();
    openFeed(
      api,
      {},
      (e) => {
        if (e.type === 'connected') setFeed('connected');
        else if (e.type === 'disconnected') {
          setFeed('offline');
          // An engine without the feed: stop asking (each try counts against the key's rate limit); focus refreshes instead.
          if (e.error && /not found|404/i.test(e.error)) ctl.abort();
        }
        else if (e.type === 'call') {
          const c = e.call as unknown as CallView;
          setLive((list) => {
            const rest = list.filter((x) => x.id !== c.id);
            return isLive(c.status) ? [c, ...rest] : rest;
          });
          // A call that ended belongs in the list below now.
          if (!isLive(c.status)) setCalls((list) => (list ? list.map((x) => (x.id === c.id ? c : x)) : list));
        }
      },
      ctl.signal,
    );
    return () => ctl.abort();
  }, [api]);

  const field = (name: keyof Filters) => ({
    id: `calls-${name}`,
    name,
    value: draft[name],
    onInput: (e: Event) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value }),
  });

  return (
    <section class="calls">
      <h1>Calls</h1>
      <form
        class="calls-filters"
        aria-label="Filter calls"
        onSubmit={(e) => {
          e.preventDefault();
          setOffset(0);
          setFilters(draft);
        }}
      >
        <div>
          <label for="calls-status">Status</label>
          <select {...field('status')}>
            <option value="">Any</option>
            {STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </div>
        <div>
          <label for="calls-direction">Direction</label>
          <select {...field('direction')}>
            <option value="">Any</option>
            <option value="inbound">inbound</option>
            <option value="outbound">outbound</option>
          </select>
        </div>
        <div>
          <label for="calls-assistant">Assistant</label>
          <select {...field('assistant')}>
            <option value="">Any</option>
            {assistants.map((a) => (
              <option value={String(a.id)}>{a.name}</option>
            ))}
          </select>
        </div>
        <div>
          <label for="calls-from">From</label>
          <input type="date" {...field('from')} />
        </div>
        <div>
          <label for="calls-to">To</label>
          <input type="date" {...field('to')} />
        </div>
        <div class="calls-filter-actions">
          <button type="submit" class="primary">
            Apply
          </button>
          <button
            type="button"
            onClick={() => {
              setDraft(EMPTY);
              setFilters(EMPTY);
              setOffset(0);
            }}
          >
            Clear
          </button>
        </div>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}

      {live.length > 0 && (
        <section aria-labelledby="live-calls">
          <h2 id="live-calls">
            Live now <span class="hint">{feed === 'connected' ? '(updating live)' : '(refreshes when you come back to this tab)'}</span>
          </h2>
          <CallsTable calls={live} caption="Calls in progress" live />
        </section>
      )}

      <h2 id="all-calls">All calls</h2>
      {calls === null ? (
        <p>Loading…</p>
      ) : calls.length === 0 ? (
        <p>No calls{offset > 0 ? ' on this page' : ' match these filters'}.</p>
      ) : (
        <CallsTable calls={calls} caption="Calls, newest first" />
      )}
      <nav class="pager" aria-label="Pages">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
          Newer
        </button>
        <span>
          {calls && calls.length > 0 ? `${offset + 1}–${offset + calls.length}` : ''}
        </span>
        <button type="button" disabled={!calls || calls.length < PAGE} onClick={() => setOffset(offset + PAGE)}>
          Older
        </button>
      </nav>
    </section>
  );
}

function CallsTable(props: { calls: CallView[]; caption: string; live?: boolean }) {
  return (
    <div class="table-wrap">
      <table class="calls-table">
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">Started</th>
            <th scope="col">From</th>
            <th scope="col">To</th>
            <th scope="col">Direction</th>
            <th scope="col">Status</th>
            <th scope="col">Duration</th>
            <th scope="col">Cost</th>
            <th scope="col">End cause</th>
          </tr>
        </thead>
        <tbody>
          {props.calls.map((c) => (
            <tr key={c.id}>
              <td>
                <Link to={`/calls/${c.id}`}>{formatDateTime(c.started_at)}</Link>
              </td>
              <td>{c.from_number}</td>
              <td>{c.to_number}</td>
              <td>{c.direction}</td>
              <td>
                <span class={`status status-${c.status}`}>{c.status}</span>
              </td>
              <td>{props.live ? 'live' : formatDuration(c.duration_seconds)}</td>
              <td>{formatCost(c.cost)}</td>
              <td>{c.end_cause ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
