import { useState } from 'preact/hooks';
import type { Api } from '../api.ts';
import { ApiError } from '../api.ts';
import { ConfirmButton } from '../page-kit/confirm-button.tsx';
import { LoadState, Notice } from '../page-kit/notice.tsx';
import { messageOf, useLoad, when } from '../page-kit/load.ts';
import { CreateForm } from '../schema-form/create-form.tsx';
import { LeadsUpload } from './leads-upload.tsx';

export interface LeadCounts {
  total: number;
  pending: number;
  calling: number;
  done: number;
  failed: number;
}
interface Campaign {
  id: number;
  name: string;
  assistant_id: number;
  phone_number_id: number;
  max_concurrent_calls: number;
  status: 'draft' | 'in-progress' | 'stopped' | 'completed';
  lead_counts: LeadCounts;
  updated_at: string;
}

/** /campaigns: progress by lead status, start and stop, leads upload, create and delete. */
export function CampaignsPage(props: { api: Api }) {
  const { api } = props;
  const [notice, setNotice] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const data = useLoad(async (signal) => {
    const [campaigns, assistants] = await Promise.all([
      api.get<Campaign[]>('/user/campaigns', signal),
      api.get<{ assistants: Array<{ id: number; name: string }> }>('/user/assistants', signal),
    ]);
    return { campaigns, assistants: new Map(assistants.assistants.map((a) => [a.id, a.name])) };
  }, []);

  const setStatus = async (c: Campaign, action: 'start' | 'stop') => {
    try {
      const answer = await api.post<{ message: string }>('/user/campaigns/update-status', { campaign_id: c.id, action });
      setNotice({ kind: 'ok', text: `${c.name}: ${answer.message}` });
    } catch (err) {
      const body = err instanceof ApiError ? (err.body as { message?: string }) : undefined;
      setNotice({ kind: 'error', text: `${c.name}: ${body?.message ?? messageOf(err)}` });
    }
    data.reload();
  };

  return (
    <section>
      <div class="page-head">
        <h1>Campaigns</h1>
        <button type="button" onClick={() => data.reload()}>
          Refresh
        </button>
      </div>
      {notice && <Notice kind={notice.kind}>{notice.text}</Notice>}
      <LoadState loading={data.loading && !data.data} error={data.error} what="campaigns" />
      {data.data && data.data.campaigns.length === 0 && <p>No campaigns yet.</p>}
      {data.data && data.data.campaigns.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">Campaigns</caption>
            <thead>
              <tr>
                <th scope="col">Campaign</th>
                <th scope="col">Assistant</th>
                <th scope="col">Status</th>
                <th scope="col">Leads</th>
                <th scope="col">Updated</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.data.campaigns.map((c) => (
                <tr key={c.id}>
                  <th scope="row">{c.name}</th>
                  <td>{data.data!.assistants.get(c.assistant_id) ?? `#${c.assistant_id}`}</td>
                  <td>
                    <span class={`badge badge-${c.status}`}>{c.status}</span>
                  </td>
                  <td>
                    <LeadProgress counts={c.lead_counts} name={c.name} />
                  </td>
                  <td>{when(c.updated_at)}</td>
                  <td class="actions">
                    {c.status === 'in-progress' ? (
                      <button type="button" onClick={() => setStatus(c, 'stop')} aria-label={`Stop ${c.name}`}>
                        Stop
                      </button>
                    ) : (
                      <button type="button" class="primary" onClick={() => setStatus(c, 'start')} aria-label={`Start ${c.name}`}>
                        Start
                      </button>
                    )}
                    <LeadsUpload api={api} campaign={c} onUploaded={(text) => {
                      setNotice({ kind: 'ok', text });
                      data.reload();
                    }} />
                    <ConfirmButton
                      label={`Delete ${c.name}`}
                      text="Delete"
                      danger
                      question={`Delete ${c.name} and its leads?`}
                      confirmLabel="Delete campaign"
                      onConfirm={async () => {
                        try {
                          await api.del(`/user/campaigns/${c.id}`);
                          setNotice({ kind: 'ok', text: `${c.name} deleted.` });
                        } catch (err) {
                          setNotice({ kind: 'error', text: `${c.name} not deleted: ${messageOf(err)}` });
                        }
                        data.reload();
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <details class="create">
        <summary>New campaign</summary>
        <CreateForm<{ data?: { name?: string }; name?: string }>
          api={api}
          path="/user/campaigns"
          name="New campaign"
          submit="Create campaign"
          onCreated={() => {
            setNotice({ kind: 'ok', text: 'Campaign created (draft): add leads, then start it.' });
            data.reload();
          }}
        />
      </details>
    </section>
  );
}

/** Lead counts by status, and a bar of the finished share (done + failed of the total). */
export function LeadProgress(props: { counts: LeadCounts; name: string }) {
  const c = props.counts;
  const finished = c.done + c.failed;
  return (
    <div class="lead-progress">
      <progress max={Math.max(1, c.total)} value={finished} aria-label={`${props.name}: ${finished} of ${c.total} leads finished`} />
      <span class="counts">
        {c.total} total · {c.pending} pending · {c.calling} calling · {c.done} done · {c.failed} failed
      </span>
    </div>
  );
}
