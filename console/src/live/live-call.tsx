import { useEffect, useState } from 'preact/hooks';
import { ApiError, type Api } from '../api.ts';
import { Link } from '../link.tsx';
import { openFeed } from './feed.ts';

/**
 * A call as it happens: its state, the transcript line by line and the engine's events (VAD,
 * end-of-turn decisions, interruptions, fillers, DTMF) as the feed brings them, and a hang-up
 * button. When the call ends, a link to its full record (recording, timeline, waterfall).
 */

type CallView = Record<string, unknown> & { id: number; uuid: string; status: string; from_number?: string; to_number?: string; direction?: string; answered_at?: string | null; ended_at?: string | null; end_cause?: string | null };
interface Line {
  speaker: string;
  text: string;
  start_ms: number;
  kind?: string;
  interrupted?: boolean;
}
interface EngineEvent {
  type: string;
  atMs: number;
  [k: string]: unknown;
}

export function LiveCall(props: { api: Api; id: number }) {
  const { api, id } = props;
  const [call, setCall] = useState<CallView | null>(null);
  const [lines, setLines] = useState<Line[]>([]);
  const [events, setEvents] = useState<EngineEvent[]>([]);
  const [connected, setConnected] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [hangingUp, setHangingUp] = useState(false);

  useEffect(() => {
    const ctl = new AbortController();
    api.get<CallView>(`/user/calls/${id}`, ctl.signal).then(setCall, (err: unknown) => {
      if (!ctl.signal.aborted) setError(err instanceof Error ? err.message : String(err));
    });
    openFeed(
      api,
      { callId: id },
      (e) => {
        if (e.type === 'connected') setConnected(true);
        else if (e.type === 'disconnected') setConnected(false);
        else if (e.type === 'call') setCall(e.call as CallView);
        else if (e.type === 'transcript') setLines((l) => [...l, e.entry as unknown as Line].sort((a, b) => a.start_ms - b.start_ms));
        else if (e.type === 'timeline') setEvents((l) => [...l.slice(-199), e.event as EngineEvent]);
      },
      ctl.signal,
    );
    return () => ctl.abort();
  }, [api, id]);

  const ended = call?.ended_at != null;
  // Before any line streamed, a reopened page shows what the record already holds.
  const shown = lines.length > 0 ? lines : ((call?.transcript as Line[] | undefined) ?? []);

  return (
    <section class="live-call" aria-labelledby="live-title">
      <h1 id="live-title">
        Live call {call ? `${call.from_number ?? ''} → ${call.to_number ?? ''}` : `#${id}`}
      </h1>
      <p class="live-state">
        <span class={`badge status-${call?.status ?? 'unknown'}`}>{call?.status ?? 'loading'}</span>{' '}
        <span aria-live="polite">{ended ? `ended (${call?.end_cause ?? 'unknown cause'})` : connected ? 'following live' : 'connecting…'}</span>
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="live-actions">
        {!ended && (
          <button
            type="button"
            class="danger"
            disabled={hangingUp || !call}
            onClick={async () => {
              if (!confirm('Hang up this call?')) return;
              setHangingUp(true);
              try {
                await api.post(`/user/calls/${id}/hangup`);
              } catch (err) {
                setError(err instanceof ApiError ? err.message : String(err));
              } finally {
                setHangingUp(false);
              }
            }}
          >
            {hangingUp ? 'Hanging up…' : 'Hang up'}
          </button>
        )}
        {ended && <Link to={`/calls/${id}`}>Open the call record</Link>}
      </div>
      <div class="live-columns">
        <section aria-labelledby="live-transcript">
          <h2 id="live-transcript">Transcript</h2>
          <ol class="live-transcript" aria-live="polite">
            {shown.map((l, i) => (
              <li key={i} class={`line speaker-${l.speaker}`}>
                <span class="at">{formatMs(l.start_ms)}</span> <strong>{l.speaker === 'caller' ? 'Caller' : 'Assistant'}</strong>
                {l.interrupted ? ' (interrupted)' : ''}: {l.text}
              </li>
            ))}
          </ol>
        </section>
        <section aria-labelledby="live-events">
          <h2 id="live-events">Engine events</h2>
          <ol class="live-events">
            {events.map((e, i) => (
              <li key={i}>
                <span class="at">{formatMs(e.atMs)}</span> {describe(e)}
              </li>
            ))}
          </ol>
        </section>
      </div>
    </section>
  );
}

export function formatMs(ms: number): string {
  const s = Math.max(0, Math.round(ms / 100) / 10);
  const m = Math.floor(s / 60);
  return `${m}:${(s - m * 60).toFixed(1).padStart(4, '0')}`;
}

/** One line per engine event, in words. */
export function describe(e: EngineEvent): string {
  switch (e.type) {
    case 'vad-speech-start':
      return 'caller starts speaking';
    case 'vad-speech-end':
      return 'caller stops speaking';
    case 'end-of-turn':
      return `end of turn (${String(e.reason)}${e.taken === false ? ', no words: no reply' : ''})`;
    case 'interruption':
      return e.taken ? 'caller interrupts: the assistant stops' : `interruption ignored (${String(e.reason)})`;
    case 'filler':
      return `filler: “${String(e.text)}”`;
    case 'assistant-audio-start':
      return `assistant speaks (${String(e.kind)})`;
    case 'assistant-audio-stop':
      return e.interrupted ? 'assistant cut off' : 'assistant done';
    case 'stt-final':
      return `heard: “${String(e.text)}”`;
    case 'dtmf':
      return `DTMF ${String(e.digit)}`;
    case 'hang-up':
      return `hang-up (${String(e.reason)})`;
    default:
      return e.type.replace(/-/g, ' ');
  }
}
