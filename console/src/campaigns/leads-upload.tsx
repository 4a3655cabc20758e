import { useState } from 'preact/hooks';
import type { Api } from '../api.ts';
import { messageOf } from '../page-kit/load.ts';
import { parseLeadsCsv } from './leads-csv.ts';

/** Adds leads to a campaign from pasted CSV or a chosen .csv file (read in the browser). */
export function LeadsUpload(props: { api: Api; campaign: { id: number; name: string }; onUploaded(message: string): void }) {
  const [open, setOpen] = useState(false);
  const [text, setText] = useState('');
  const [problems, setProblems] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const id = `leads-${props.campaign.id}`;
  if (!open) {
    return (
      <button type="button" onClick={() => setOpen(true)} aria-label={`Add leads to ${props.campaign.name}`}>
        Add leads
      </button>
    );
  }
  return (
    <form
      class="leads-upload"
      aria-label={`Add leads to ${props.campaign.name}`}
      onSubmit={async (e) => {
        e.preventDefault();
        const parsed = parseLeadsCsv(text);
        if (parsed.problems.length > 0 || parsed.leads.length === 0) {
          setProblems(parsed.problems.map((p) => (p.line > 0 ? `Line ${p.line}: ${p.message}` : p.message)));
          return;
        }
        setBusy(true);
        try {
          const answer = await props.api.post<{ message?: string }>(`/user/campaigns/${props.campaign.id}/leads`, { leads: parsed.leads });
          setOpen(false);
          setText('');
          setProblems([]);
          props.onUploaded(`${props.campaign.name}: ${answer.message ?? `${parsed.leads.length} leads added.`}`);
        } catch (err) {
          setProblems([messageOf(err)]);
        } finally {
          setBusy(false);
        }
      }}
    >
      <label for={`${id}-file`}>CSV file</label>
      <input
        id={`${id}-file`}
        type="file"
        accept=".csv,text/csv,text/plain"
        onChange={async (e) => {
          const file = (e.target as HTMLInputElement).files?.[0];
          if (file) setText(await file.text());
        }}
      />
      <label for={`${id}-text`}>Leads (CSV)</label>
      <textarea
        id={`${id}-text`}
        rows={4}
        class="mono"
        value={text}
        aria-describedby={`${id}-hint${problems.length ? ` ${id}-problems` : ''}`}
        aria-invalid={problems.length ? true : undefined}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
      />
      <p id={`${id}-hint`} class="hint">
        A header row with phone_number and any variables (customer_name, …), or one number per line.
      </p>
      {problems.length > 0 && (
        <ul id={`${id}-problems`} class="error" role="alert">
          {problems.map((p, i) => (
            <li key={i}>{p}</li>
          ))}
        </ul>
      )}
      <button type="submit" class="primary" disabled={busy}>
        Upload leads
      </button>
      <button type="button" onClick={() => setOpen(false)}>
        Cancel
      </button>
    </form>
  );
}
