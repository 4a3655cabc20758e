import type { Api } from '../api.ts';
import { Link } from '../link.tsx';
import { LoadState } from '../page-kit/notice.tsx';
import { useLoad } from '../page-kit/load.ts';

interface HistoryItem {
  role: 'assistant' | 'user';
  content: string;
  function_calls?: Array<{ name: string; arguments: unknown; result: unknown }>;
}
interface ConversationView {
  history: HistoryItem[];
  variables: Record<string, unknown> | null;
  external_identifier?: string;
  customer?: { name: string | null; phone: string | null };
}

/** /conversations/:uuid: the whole history, with the function calls the assistant made. */
export function ConversationDetail(props: { api: Api; uuid: string }) {
  const view = useLoad((signal) => props.api.get<ConversationView>(`/conversations/${encodeURIComponent(props.uuid)}`, signal), [props.uuid]);
  const v = view.data;
  return (
    <section>
      <p class="crumbs">
        <Link to="/conversations">Conversations</Link>
      </p>
      <h1>Conversation</h1>
      <p class="hint mono">{props.uuid}</p>
      <LoadState loading={view.loading && !v} error={view.error} what="the conversation" />
      {v && (
        <>
          {(v.customer || v.external_identifier) && (
            <p>
              {v.customer && `Customer: ${v.customer.name ?? ''} ${v.customer.phone ?? ''}`}
              {v.external_identifier && `External reference: ${v.external_identifier}`}
            </p>
          )}
          {v.variables && Object.keys(v.variables).length > 0 && (
            <dl class="variables">
              {Object.entries(v.variables).map(([k, val]) => (
                <div key={k}>
                  <dt>{k}</dt>
                  <dd>{String(val)}</dd>
                </div>
              ))}
            </dl>
          )}
          {v.history.length === 0 ? (
            <p>No messages yet.</p>
          ) : (
            <ol class="chat" aria-label="History">
              {v.history.map((m, i) => (
                <li key={i} class={`chat-${m.role}`}>
                  <span class="who">{m.role === 'assistant' ? 'Assistant' : 'Customer'}</span>
                  <p>{m.content}</p>
                  {m.function_calls && m.function_calls.length > 0 && (
                    <details>
                      <summary>{m.function_calls.length === 1 ? `Called ${m.function_calls[0]!.name}` : `${m.function_calls.length} function calls`}</summary>
                      <pre class="mono">{JSON.stringify(m.function_calls, null, 2)}</pre>
                    </details>
                  )}
                </li>
              ))}
            </ol>
          )}
        </>
      )}
    </section>
  );
}
