import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api } from '../api.ts';
import { storedKey } from '../session.ts';
import { BrowserCall, type CallInfo } from './call-client.ts';
import { METER_FLOOR_DBFS, meterPosition } from './level.ts';

/**
 * /console/assistants/:id/talk — call the assistant from this browser: Call / Hang up, mute,
 * the call's state, and the level of what the assistant says (the remote audio's meter).
 */

interface Assistant {
  id: number;
  name?: string;
}

const STATUS: Record<CallInfo['state'], string> = {
  idle: 'Not in a call.',
  connecting: 'Connecting…',
  ringing: 'Setting up audio…',
  'in-call': 'In call.',
  ended: 'Call ended.',
  failed: 'Call failed.',
};

export function TalkPage({ api, assistantId }: { api: Api; assistantId: number }) {
  const [assistant, setAssistant] = useState<Assistant | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [info, setInfo] = useState<CallInfo>({ state: 'idle', muted: false });
  const [levelDb, setLevelDb] = useState(METER_FLOOR_DBFS);
  const call = useRef<BrowserCall | null>(null);
  const audio = useRef<HTMLAudioElement>(null);
  const bar = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const ctl = new AbortController();
    api
      .get<Assistant>(`/user/assistant/${assistantId}`, ctl.signal)
      .then((a) => setAssistant(a))
      .catch((err: unknown) => {
        if (!ctl.signal.aborted) setLoadError((err as Error).message);
      });
    return () => ctl.abort();
  }, [api, assistantId]);

  // The meter follows the remote audio while a call is up (one reading per animation frame).
  useEffect(() => {
    if (info.state !== 'in-call') return;
    let frame = 0;
    const tick = (): void => {
      const db = call.current?.levelDbfs() ?? METER_FLOOR_DBFS;
      setLevelDb(db);
      if (bar.current) bar.current.style.width = `${Math.round(meterPosition(db) * 100)}%`;
      frame = requestAnimationFrame(tick);
    };
    frame = requestAnimationFrame(tick);
    return () => cancelAnimationFrame(frame);
  }, [info.state]);

  useEffect(() => () => call.current?.hangup(), []);

  const active = info.state === 'connecting' || info.state === 'ringing' || info.state === 'in-call';

  function start(): void {
    const key = storedKey();
    if (!key) return;
    const c = new BrowserCall(key, assistantId, (next) => {
      setInfo(next);
      if (audio.current && c.remoteStream && audio.current.srcObject !== c.remoteStream) {
        audio.current.srcObject = c.remoteStream;
        void audio.current.play().catch(() => undefined);
      }
    });
    call.current = c;
    void c.start();
  }

  const name = assistant?.name ?? `Assistant ${assistantId}`;
  return (
    <section class="talk">
      <h1>Talk to {name}</h1>
      {loadError ? (
        <p class="error" role="alert">
          {loadError}
        </p>
      ) : null}
      <p class="hint">A call from this browser: it runs, is recorded and is billed like a phone call.</p>
      <div class="talk-controls">
        {active ? (
          <button type="button" class="danger" onClick={() => call.current?.hangup()}>
            Hang up
          </button>
        ) : (
          <button type="button" class="primary" onClick={start} disabled={!!loadError}>
            Call
          </button>
        )}
        <button type="button" aria-pressed={info.muted} disabled={info.state !== 'in-call'} onClick={() => call.current?.setMuted(!info.muted)}>
          {info.muted ? 'Unmute' : 'Mute'}
        </button>
      </div>
      <p class="talk-status" role="status" aria-live="polite" data-state={info.state}>
        {STATUS[info.state]}
        {info.callId !== undefined ? ` Call #${info.callId}.` : ''}
        {info.endCause ? ` (${info.endCause})` : ''}
        {info.error ? ` ${info.error}` : ''}
      </p>
      <div class="talk-level">
        <span id="talk-level-label">Assistant level</span>
        <div class="talk-meter" role="meter" aria-labelledby="talk-level-label" aria-valuemin={METER_FLOOR_DBFS} aria-valuemax={0} aria-valuenow={Math.round(levelDb)} aria-valuetext={`${Math.round(levelDb)} dBFS`}>
          <div class="talk-meter-bar" ref={bar} />
        </div>
        <span class="talk-level-db">{Math.round(levelDb)} dBFS</span>
      </div>
      <audio ref={audio} autoplay />
    </section>
  );
}
