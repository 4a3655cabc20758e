import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api } from '../api.ts';
import { peaks, timeAtX } from './draw/waveform.ts';
import { formatClock } from './format.ts';

/**
 * The stereo recording: fetched with the key (api.blob), played by an <audio> on a blob: URL,
 * both channels' waveforms drawn from the decoded PCM (caller left, assistant right), a playhead
 * that follows playback, and a click on a waveform seeks there.
 */

export interface PlayerHandle {
  seek(seconds: number): void;
}

export function Player(props: { api: Api; callId: number; onTime(seconds: number): void; handle: { current: PlayerHandle | null } }) {
  const { api, callId } = props;
  const audio = useRef<HTMLAudioElement>(null);
  const [url, setUrl] = useState<string | null>(null);
  const [buffer, setBuffer] = useState<AudioBuffer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [time, setTime] = useState(0);
  const duration = buffer?.duration ?? 0;

  useEffect(() => {
    const ctl = new AbortController();
    let objectUrl: string | undefined;
    (async () => {
      try {
        const blob = await api.blob(`/user/calls/${callId}/recording`, ctl.signal);
        objectUrl = URL.createObjectURL(blob);
        setUrl(objectUrl);
        // Decoding needs no user gesture on an offline context; its rate only changes the drawing.
        const decoded = await new OfflineAudioContext(1, 1, 16_000).decodeAudioData(await blob.arrayBuffer());
        if (!ctl.signal.aborted) setBuffer(decoded);
      } catch (err) {
        if (!ctl.signal.aborted) setError(err instanceof Error ? err.message : String(err));
      }
    })();
    return () => {
      ctl.abort();
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    };
  }, [api, callId]);

  props.handle.current = {
    seek(seconds) {
      const el = audio.current;
      if (!el) return;
      el.currentTime = seconds;
      setTime(seconds);
      props.onTime(seconds);
    },
  };

  // While playing, follow every frame (timeupdate alone is 4 Hz: the playhead would jump).
  useEffect(() => {
    const el = audio.current;
    if (!el) return;
    let raf = 0;
    const tick = () => {
      setTime(el.currentTime);
      props.onTime(el.currentTime);
      if (!el.paused) raf = requestAnimationFrame(tick);
    };
    const onPlay = () => {
      cancelAnimationFrame(raf);
      raf = requestAnimationFrame(tick);
    };
    el.addEventListener('play', onPlay);
    el.addEventListener('seeked', tick);
    el.addEventListener('pause', tick);
    return () => {
      cancelAnimationFrame(raf);
      el.removeEventListener('play', onPlay);
      el.removeEventListener('seeked', tick);
      el.removeEventListener('pause', tick);
    };
  }, [url]);

  if (error) return <p class="error">The recording could not be loaded: {error}</p>;
  const pct = duration > 0 ? (Math.min(time, duration) / duration) * 100 : 0;
  return (
    <div class="player">
      <audio ref={audio} src={url ?? undefined} controls preload="auto" aria-label="Call recording (caller left, assistant right)" />
      <p class="hint" aria-live="off">
        {formatClock(time)} / {buffer ? formatClock(duration) : '…'}
      </p>
      <div class="waveforms">
        {[0, 1].map((channel) => (
          <div class="waveform-row" key={channel}>
            <span class={`waveform-label ${channel === 0 ? 'caller' : 'assistant'}`}>{channel === 0 ? 'Caller' : 'Assistant'}</span>
            <div class="waveform">
              <Waveform buffer={buffer} channel={channel} onSeek={(x, w) => props.handle.current?.seek(timeAtX(x, w, duration))} />
              <div class="playhead" style={{ left: `${pct}%` }} aria-hidden="true" />
            </div>
          </div>
        ))}
      </div>
    </div>
  );
}

function Waveform(props: { buffer: AudioBuffer | null; channel: number; onSeek(x: number, width: number): void }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [width, setWidth] = useState(0);

  useEffect(() => {
    const el = canvas.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    setWidth(el.clientWidth);
    return () => ro.disconnect();
  }, []);

  useEffect(() => {
    const el = canvas.current;
    const buffer = props.buffer;
    if (!el || !buffer || width === 0) return;
    const dpr = window.devicePixelRatio || 1;
    const cols = Math.floor(width * dpr);
    const height = Math.floor(el.clientHeight * dpr);
    el.width = cols;
    el.height = height;
    const ctx = el.getContext('2d');
    if (!ctx) return;
    const channel = Math.min(props.channel, buffer.numberOfChannels - 1);
    const p = peaks(buffer.getChannelData(channel), cols);
    const style = getComputedStyle(el);
    ctx.clearRect(0, 0, cols, height);
    ctx.fillStyle = style.getPropertyValue(props.channel === 0 ? '--caller' : '--assistant').trim() || '#333';
    const mid = height / 2;
    for (let x = 0; x < cols; x++) {
      const top = mid - p.max[x]! * mid;
      const bottom = mid - p.min[x]! * mid;
      ctx.fillRect(x, top, 1, Math.max(1, bottom - top));
    }
  }, [props.buffer, props.channel, width]);

  return (
    <canvas
      ref={canvas}
      class="waveform-canvas"
      data-channel={props.channel}
      role="img"
      aria-label={`${props.channel === 0 ? 'Caller' : 'Assistant'} channel waveform; click to seek`}
      onClick={(e) => {
        const el = e.currentTarget as HTMLCanvasElement;
        props.onSeek(e.offsetX, el.clientWidth);
      }}
    />
  );
}
