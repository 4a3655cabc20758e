import { useState } from 'preact/hooks';
import type { Api } from '../api.ts';
import { Link } from '../link.tsx';
import { LoadState } from '../page-kit/notice.tsx';
import { useLoad, when } from '../page-kit/load.ts';

interface ConversationRow {
  conversation_id: string;
  assistant_id: number;
  type: string;
  status: string;
  ai_enabled: boolean;
  customer_identifier: string | null;
  external_identifier: string | null;
  customer: { name: string | null; phone: string | null } | null;
  message_count: number;
  last_message_at: string;
}

const PAGE = 25;

/** /conversations: the account's chats, most recently active first, by assistant, paged. */
export function ConversationList(props: { api: Api }) {
  const { api } = props;
  const [assistant, setAssistant] = useState('');
  const [offset, setOffset] = useState(0);
  const assistants = useLoad((signal) => api.get<{ assistants: Array<{ id: number; name: string }> }>('/user/assistants', signal), []);
  const list = useLoad((signal) => {
    const q = new URLSearchParams({ limit: String(PAGE), offset: String(offset) });
    if (assistant) q.set('assistant_id', assistant);
    return api.get<ConversationRow[]>(`/user/conversations?${q}`, signal);
  }, [assistant, offset]);
  const names = new Map((assistants.data?.assistants ?? []).map((a) => [a.id, a.name]));
  const rows = list.data ?? [];

  return (
    <section>
      <h1>Conversations</h1>
      <div class="filters">
        <label for="conv-assistant">Assistant</label>
        <select
          id="conv-assistant"
          value={assistant}
          onChange={(e) => {
            setAssistant((e.target as HTMLSelectElement).value);
            setOffset(0);
          }}
        >
          <option value="">All assistants</option>
          {(assistants.data?.assistants ?? []).map((a) => (
            <option key={a.id} value={String(a.id)}>
              {a.name}
            </option>
          ))}
        </select>
      </div>
      <LoadState loading={list.loading && !list.data} error={list.error} what="conversations" />
      {list.data && rows.length === 0 && <p>No conversations{offset > 0 ? ' on this page' : ' yet'}.</p>}
      {rows.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">Conversations</caption>
            <thead>
              <tr>
                <th scope="col">Conversation</th>
                <th scope="col">Assistant</th>
                <th scope="col">Type</th>
                <th scope="col">Messages</th>
                <th scope="col">Status</th>
                <th scope="col">Last message</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((c) => (
                <tr key={c.conversation_id}>
                  <th scope="row">
                    <Link to={`/conversations/${c.conversation_id}`}>{who(c)}</Link>
                  </th>
                  <td>{names.get(c.assistant_id) ?? `#${c.assistant_id}`}</td>
                  <td>{c.type}</td>
                  <td>{c.message_count}</td>
                  <td>
                    {c.status}
                    {c.ai_enabled ? '' : ' · human'}
                  </td>
                  <td>{when(c.last_message_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pager" aria-label="Pages">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
          Newer
        </button>
        <button type="button" disabled={rows.length < PAGE} onClick={() => setOffset(offset + PAGE)}>
          Older
        </button>
      </nav>
    </section>
  );
}

function who(c: ConversationRow): string {
  return c.customer?.name ?? c.customer?.phone ?? c.external_identifier ?? c.customer_identifier ?? `Chat ${c.conversation_id.slice(0, 8)}`;
}
