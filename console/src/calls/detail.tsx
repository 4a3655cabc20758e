import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Api } from '../api.ts';
import { ApiError } from '../api.ts';
import { Link } from '../link.tsx';
import { buildTimeline } from './draw/timeline.ts';
import { buildWaterfall } from './draw/waterfall.ts';
import { activeLineAt } from './draw/waveform.ts';
import { formatClock, formatCost, formatDateTime, formatDuration } from './format.ts';
import { Player, type PlayerHandle } from './player.tsx';
import { TimelineView } from './timeline-view.tsx';
import { isLive, transcriptZeroMs, type CallView, type CallWebhookView, type TapeView } from './types.ts';
import { WaterfallView } from './waterfall-view.tsx';

/**
 * /console/calls/:id: everything a call left behind: its record, media quality, the recording
 * with both channels' waveforms, the transcript aligned to the recording, the turn timeline and
 * latency waterfall (from the call tape and the transcript), the evaluation and the webhooks.
 */
export function CallDetail(props: { api: Api; id: string }) {
  const { api } = props;
  const id = Number(props.id);
  const [call, setCall] = useState<CallView | null>(null);
  const [tape, setTape] = useState<TapeView | null>(null);
  const [hooks, setHooks] = useState<CallWebhookView[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [position, setPosition] = useState(0);
  const player = useRef<PlayerHandle | null>(null);

  useEffect(() => {
    if (!Number.isInteger(id) || id <= 0) {
      setError('No call has this address.');
      return;
    }
    const ctl = new AbortController();
    setCall(null);
    setTape(null);
    (async () => {
      try {
        const c = await api.get<CallView>(`/user/calls/${id}`, ctl.signal);
        setCall(c);
        api.get<CallWebhookView[]>(`/user/calls/${id}/webhooks`, ctl.signal).then(setHooks, () => setHooks([]));
        if (c.tape_url) api.get<TapeView>(`/user/calls/${id}/tape`, ctl.signal).then(setTape, () => setTape(null));
      } catch (err) {
        if (!ctl.signal.aborted) setError(err instanceof ApiError && err.status === 404 ? 'This call does not exist, or is not yours.' : String(err instanceof Error ? err.message : err));
      }
    })();
    return () => ctl.abort();
  }, [api, id]);

  const zero = transcriptZeroMs(tape);
  const timeline = useMemo(() => (call ? buildTimeline({ transcript: call.transcript, tape, durationMs: call.duration_seconds !== null ? call.duration_seconds * 1000 : null }) : null), [call, tape]);
  const waterfall = useMemo(() => (call ? buildWaterfall(call.transcript, zero) : null), [call, zero]);

  if (error) {
    return (
      <section>
        <h1>Call</h1>
        <p class="error" role="alert">
          {error}
        </p>
        <Link to="/calls">Back to calls</Link>
      </section>
    );
  }
  if (!call) return <p>Loading…</p>;

  const positionMs = position * 1000;
  const active = activeLineAt(call.transcript, zero, positionMs);
  const seekMs = (ms: number) => player.current?.seek(Math.max(0, ms / 1000));
  const live = isLive(call.status);

  return (
    <article class="call-detail">
      <p>
        <Link to="/calls">← Calls</Link>
      </p>
      <h1>
        Call {call.id}: {call.from_number} → {call.to_number}
      </h1>
      {live && (
        <p class="live-banner" role="status">
          This call is in progress. <Link to={`/calls/${call.id}/live`}>Follow it live</Link>
        </p>
      )}
      <dl class="facts">
        <Fact name="Direction" value={call.direction} />
        <Fact name="Status" value={call.status} />
        <Fact name="Started" value={formatDateTime(call.started_at)} />
        <Fact name="Answered" value={formatDateTime(call.answered_at)} />
        <Fact name="Duration" value={formatDuration(call.duration_seconds)} />
        <Fact name="Cost" value={formatCost(call.cost)} />
        <Fact name="End cause" value={call.end_cause ?? '—'} />
        <Fact name="Codec" value={call.codec ?? '—'} />
      </dl>

      <section aria-labelledby="quality">
        <h2 id="quality">Media quality</h2>
        {call.quality ? (
          <dl class="facts">
            {Object.entries(call.quality).map(([k, v]) => (
              <Fact key={k} name={k.replace(/_/g, ' ')} value={v === null ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v)} />
            ))}
          </dl>
        ) : (
          <p>No media figures (the call was not answered).</p>
        )}
      </section>

      <section aria-labelledby="recording">
        <h2 id="recording">Recording</h2>
        {call.recording_url ? <Player api={api} callId={call.id} onTime={setPosition} handle={player} /> : <p>This call was not recorded.</p>}
      </section>

      <section aria-labelledby="transcript">
        <h2 id="transcript">Transcript</h2>
        {call.transcript.length === 0 ? (
          <p>No transcript.</p>
        ) : (
          <ol class="transcript">
            {call.transcript.map((line, i) => (
              <li key={i} class={`line ${line.speaker}${i === active ? ' active' : ''}`} aria-current={i === active ? 'true' : undefined}>
                <button type="button" class="line-seek" onClick={() => seekMs(line.start_ms + zero)} disabled={!call.recording_url}>
                  <span class="line-time">{formatClock((line.start_ms + zero) / 1000)}</span>
                  <span class="line-speaker">{line.speaker === 'caller' ? 'Caller' : 'Assistant'}</span>
                  <span class="line-text">
                    {line.text}
                    {line.interrupted && <span class="hint"> (interrupted)</span>}
                  </span>
                </button>
                {line.fillers && line.fillers.length > 0 && <p class="hint">Fillers: {line.fillers.join(' · ')}</p>}
              </li>
            ))}
          </ol>
        )}
      </section>

      <section aria-labelledby="timeline">
        <h2 id="timeline">Turn timeline</h2>
        {timeline && <TimelineView model={timeline} positionMs={positionMs} onSeek={seekMs} />}
        {!call.tape_url && <p class="hint">No call tape for this call: the timeline shows the transcript only.</p>}
      </section>

      <section aria-labelledby="latency">
        <h2 id="latency">Latency per turn</h2>
        {waterfall && <WaterfallView model={waterfall} onSeek={seekMs} />}
      </section>

      <section aria-labelledby="evaluation">
        <h2 id="evaluation">Evaluation</h2>
        {call.evaluation ? (
          <dl class="facts evaluation">
            {Object.entries(call.evaluation).map(([k, v]) => (
              <Fact key={k} name={k.replace(/_/g, ' ')} value={typeof v === 'string' ? v : JSON.stringify(v)} />
            ))}
          </dl>
        ) : (
          <p>No post-call evaluation.</p>
        )}
      </section>

      <section aria-labelledby="webhooks">
        <h2 id="webhooks">Webhooks</h2>
        {hooks === null ? (
          <p>Loading…</p>
        ) : hooks.length === 0 ? (
          <p>No webhook was sent for this call.</p>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Destination</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Last response</th>
                  <th scope="col">Time</th>
                </tr>
              </thead>
              <tbody>
                {hooks.map((h) => (
                  <tr key={h.id}>
                    <td>{h.event}</td>
                    <td>{h.destination}</td>
                    <td>
                      <span class={`status status-${h.status}`}>{h.status}</span>
                    </td>
                    <td>{h.attempts}</td>
                    <td>{h.last_response_code ?? h.last_error ?? (h.status === 'delivered' ? '2xx' : '—')}</td>
                    <td>{formatDateTime(h.delivered_at ?? h.next_attempt_at ?? h.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </article>
  );
}

function Fact(props: { name: string; value: string }) {
  return (
    <div>
      <dt>{props.name}</dt>
      <dd>{props.value}</dd>
    </div>
  );
}
