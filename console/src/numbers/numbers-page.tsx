import { useState } from 'preact/hooks';
import type { Api } from '../api.ts';
import { ConfirmButton } from '../page-kit/confirm-button.tsx';
import { LoadState, Notice } from '../page-kit/notice.tsx';
import { messageOf, useLoad, when } from '../page-kit/load.ts';
import { CreateForm } from '../schema-form/create-form.tsx';

interface PhoneNumber {
  id: number;
  phone_number: string;
  type: 'sip_trunk' | 'caller_id';
  sip_trunk_id: number | null;
  assistant_id: number | null;
  created_at: string;
}
interface Trunk {
  id: number;
  sip_trunk_type: string;
  phone_number: string;
  nickname: string | null;
  sip_username: string;
  sip_address: string;
  sip_calling_format: string;
  inbound_authorization_type: string;
  allowed_inbound_ips: string[] | null;
  transport: string | null;
  srtp: string;
  created_at: string;
}

/**
 * /numbers: SIP trunks and phone numbers. The API has no update for either, so this page
 * creates and deletes; the SIP password is write-only (the API never returns it).
 */
export function NumbersPage(props: { api: Api }) {
  const { api } = props;
  const [notice, setNotice] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const data = useLoad(async (signal) => {
    const [numbers, trunks, assistants] = await Promise.all([
      api.get<PhoneNumber[]>('/user/phone-numbers', signal),
      api.get<Trunk[]>('/user/sip-trunks', signal),
      api.get<{ assistants: Array<{ id: number; name: string }> }>('/user/assistants', signal),
    ]);
    return { numbers, trunks, assistants: new Map(assistants.assistants.map((a) => [a.id, a.name])) };
  }, []);
  const remove = async (path: string, what: string) => {
    try {
      await api.del(path);
      setNotice({ kind: 'ok', text: `${what} deleted.` });
      data.reload();
    } catch (err) {
      setNotice({ kind: 'error', text: `${what} not deleted: ${messageOf(err)}` });
    }
  };

  return (
    <section>
      <h1>Numbers and trunks</h1>
      {notice && <Notice kind={notice.kind}>{notice.text}</Notice>}
      <LoadState loading={data.loading && !data.data} error={data.error} what="numbers and trunks" />

      <h2 id="trunks-heading">SIP trunks</h2>
      {data.data && data.data.trunks.length === 0 && <p>No SIP trunks yet.</p>}
      {data.data && data.data.trunks.length > 0 && (
        <div class="table-wrap">
          <table aria-labelledby="trunks-heading">
            <thead>
              <tr>
                <th scope="col">Trunk</th>
                <th scope="col">Number</th>
                <th scope="col">Server</th>
                <th scope="col">Username</th>
                <th scope="col">Password</th>
                <th scope="col">Inbound</th>
                <th scope="col">Transport</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.data.trunks.map((t) => (
                <tr key={t.id}>
                  <th scope="row">{t.nickname ?? `Trunk ${t.id}`}</th>
                  <td>
                    {t.phone_number} <span class="hint">({t.sip_trunk_type}, {t.sip_calling_format})</span>
                  </td>
                  <td>{t.sip_address}</td>
                  <td>{t.sip_username}</td>
                  <td>
                    <span aria-label="Password set, not shown">••••••</span>
                  </td>
                  <td>{t.inbound_authorization_type === 'ip' ? `IP: ${(t.allowed_inbound_ips ?? []).join(', ')}` : 'credentials'}</td>
                  <td>
                    {t.transport ?? 'udp'}
                    {t.srtp !== 'off' ? `, SRTP ${t.srtp}` : ''}
                  </td>
                  <td>{when(t.created_at)}</td>
                  <td>
                    <ConfirmButton
                      label={`Delete trunk ${t.nickname ?? t.id}`}
                      text="Delete"
                      danger
                      question={`Delete the trunk and its number ${t.phone_number}? Assistants using it lose it.`}
                      confirmLabel="Delete trunk"
                      onConfirm={() => remove(`/user/sip-trunks/${t.id}`, 'Trunk')}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <details class="create">
        <summary>Add a SIP trunk</summary>
        <CreateForm<{ data: Trunk }>
          api={api}
          path="/user/sip-trunks"
          name="New SIP trunk"
          submit="Create trunk"
          shows={(field, values) => field !== 'allowed_inbound_ips' || values.inbound_authorization_type === 'ip'}
          onCreated={(answer) => {
            setNotice({ kind: 'ok', text: `Trunk ${answer.data.nickname ?? answer.data.phone_number} created.` });
            data.reload();
          }}
        />
      </details>

      <h2 id="numbers-heading">Phone numbers</h2>
      {data.data && data.data.numbers.length === 0 && <p>No phone numbers yet.</p>}
      {data.data && data.data.numbers.length > 0 && (
        <div class="table-wrap">
          <table aria-labelledby="numbers-heading">
            <thead>
              <tr>
                <th scope="col">Number</th>
                <th scope="col">Type</th>
                <th scope="col">Inbound assistant</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.data.numbers.map((n) => (
                <tr key={n.id}>
                  <th scope="row">{n.phone_number}</th>
                  <td>{n.type === 'caller_id' ? 'caller ID' : `SIP trunk ${n.sip_trunk_id ?? ''}`}</td>
                  <td>{n.assistant_id === null ? '—' : (data.data!.assistants.get(n.assistant_id) ?? `#${n.assistant_id}`)}</td>
                  <td>{when(n.created_at)}</td>
                  <td>
                    {n.type === 'caller_id' ? (
                      <ConfirmButton
                        label={`Delete number ${n.phone_number}`}
                        text="Delete"
                        danger
                        question={`Delete ${n.phone_number}? Assistants using it lose it.`}
                        confirmLabel="Delete number"
                        onConfirm={() => remove(`/user/phone-numbers/${n.id}`, 'Number')}
                      />
                    ) : (
                      <span class="hint">deleted with its trunk</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <details class="create">
        <summary>Register a caller-ID number</summary>
        <CreateForm<{ phone_number?: string; data?: { phone_number: string } }>
          api={api}
          path="/user/phone-numbers"
          name="New caller-ID number"
          submit="Register number"
          onCreated={() => {
            setNotice({ kind: 'ok', text: 'Number registered.' });
            data.reload();
          }}
        />
      </details>
    </section>
  );
}
