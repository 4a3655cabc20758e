import type { Api } from '../api.ts';
import { Link } from '../link.tsx';
import { LoadState } from '../page-kit/notice.tsx';
import { useLoad, when } from '../page-kit/load.ts';

interface AssistantRow {
  id: number;
  name: string;
  type: string;
  mode: string;
  status: string;
  phone_number_id: number | null;
  updated_at: string;
}
interface NumberRow {
  id: number;
  phone_number: string;
}

/** /assistants: every assistant of the account with its mode, status and phone number. */
export function AssistantList(props: { api: Api }) {
  const { api } = props;
  const list = useLoad(async (signal) => {
    const [a, numbers] = await Promise.all([api.get<{ assistants: AssistantRow[] }>('/user/assistants', signal), api.get<NumberRow[]>('/user/phone-numbers', signal)]);
    return { assistants: a.assistants, numbers: new Map(numbers.map((n) => [n.id, n.phone_number])) };
  }, []);
  return (
    <section>
      <div class="page-head">
        <h1>Assistants</h1>
        <Link to="/assistants/new" class="button-link primary">
          New assistant
        </Link>
      </div>
      <LoadState loading={list.loading && !list.data} error={list.error} what="assistants" />
      {list.data && list.data.assistants.length === 0 && <p>No assistants yet.</p>}
      {list.data && list.data.assistants.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">Assistants</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Mode</th>
                <th scope="col">Type</th>
                <th scope="col">Status</th>
                <th scope="col">Number</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {list.data.assistants.map((a) => (
                <tr key={a.id}>
                  <th scope="row">
                    <Link to={`/assistants/${a.id}`}>{a.name}</Link>
                  </th>
                  <td>{a.mode}</td>
                  <td>{a.type}</td>
                  <td>
                    <span class={`badge badge-${a.status}`}>{a.status}</span>
                  </td>
                  <td>{a.phone_number_id === null ? '—' : (list.data!.numbers.get(a.phone_number_id) ?? `#${a.phone_number_id}`)}</td>
                  <td>{when(a.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
