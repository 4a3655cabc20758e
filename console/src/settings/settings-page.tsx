import { useState } from 'preact/hooks';
import type { Api } from '../api.ts';
import { ConfirmButton } from '../page-kit/confirm-button.tsx';
import { LoadState, Notice } from '../page-kit/notice.tsx';
import { messageOf, useLoad, when } from '../page-kit/load.ts';

interface Secret {
  webhook_secret: string;
  previous_secret_valid_until: string | null;
}

/**
 * /settings: the webhook signing secret (hidden until asked, rotated after a confirmation, the
 * replaced one's overlap shown) and the API reference. The API has no balance endpoint, so no
 * balance is shown here.
 */
export function SettingsPage(props: { api: Api }) {
  const { api } = props;
  const secret = useLoad((signal) => api.get<Secret>('/user/webhook-secret', signal), []);
  const [shown, setShown] = useState(false);
  const [overlapHours, setOverlapHours] = useState('');
  const [force, setForce] = useState(false);
  const [notice, setNotice] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const s = secret.data;
  const overlapInvalid = overlapHours !== '' && !(Number(overlapHours) >= 0 && Number(overlapHours) <= 720);

  return (
    <section>
      <h1>Settings</h1>
      <h2>Webhook signing secret</h2>
      <p class="hint">Every webhook the engine sends is signed with this secret; check the signature in your receiver.</p>
      <LoadState loading={secret.loading && !s} error={secret.error} what="the webhook secret" />
      {s && (
        <div class="secret">
          <p>
            <span class="sr-only">Current secret: </span>
            <code class="mono" aria-label={shown ? 'Webhook secret' : 'Webhook secret, hidden'}>
              {shown ? s.webhook_secret : `${s.webhook_secret.slice(0, 6)}${'•'.repeat(16)}`}
            </code>{' '}
            <button type="button" aria-pressed={shown} onClick={() => setShown(!shown)}>
              {shown ? 'Hide' : 'Show'}
            </button>
          </p>
          <p>
            {s.previous_secret_valid_until
              ? `The previous secret keeps signing beside this one until ${when(s.previous_secret_valid_until)}.`
              : 'No earlier secret is still signing.'}
          </p>
        </div>
      )}
      <fieldset class="rotate">
        <legend>Rotate</legend>
        <div class="field">
          <label for="overlap-hours">Overlap (hours)</label>
          <input
            id="overlap-hours"
            type="number"
            min={0}
            max={720}
            step="any"
            value={overlapHours}
            aria-describedby="overlap-hint"
            aria-invalid={overlapInvalid ? true : undefined}
            onInput={(e) => setOverlapHours((e.target as HTMLInputElement).value)}
          />
          <p id="overlap-hint" class="hint">
            How long the replaced secret keeps signing, so receivers can switch over; empty: the engine’s default (24 hours unless the operator set another); 0: it stops at once.
          </p>
        </div>
        <div class="field field-check">
          <input id="rotate-force" type="checkbox" checked={force} onChange={(e) => setForce((e.target as HTMLInputElement).checked)} aria-describedby="force-hint" />
          <label for="rotate-force">Force</label>
          <p id="force-hint" class="hint">
            Rotate even while an earlier rotation still overlaps (for a leaked secret: force with overlap 0).
          </p>
        </div>
        <ConfirmButton
          label="Rotate secret"
          question="Rotate the webhook secret? Receivers must switch to the new one before the overlap ends."
          confirmLabel="Rotate now"
          onConfirm={async () => {
            if (overlapInvalid) {
              setNotice({ kind: 'error', text: 'The overlap must be 0 to 720 hours.' });
              return;
            }
            try {
              const body: Record<string, unknown> = {};
              if (overlapHours !== '') body.overlap_seconds = Math.round(Number(overlapHours) * 3600);
              if (force) body.force = true;
              const answer = await api.post<{ message: string }>('/user/webhook-secret/rotate', body);
              setNotice({ kind: 'ok', text: answer.message });
              setShown(false);
              secret.reload();
            } catch (err) {
              setNotice({ kind: 'error', text: `Not rotated: ${messageOf(err)}` });
            }
          }}
        />
        {notice && <Notice kind={notice.kind}>{notice.text}</Notice>}
      </fieldset>

      <h2>API</h2>
      <p>
        <a href="/api/docs">API reference (/api/docs)</a> · <a href="/api/openapi.json">OpenAPI document</a>
      </p>
    </section>
  );
}
