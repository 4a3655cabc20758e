/**
 * A call from this browser into an assistant: the microphone (getUserMedia), one
 * RTCPeerConnection (we offer, the engine answers), the signalling socket on our own origin with
 * the key sent in its first message (never in the URL), trickle ICE both ways, the remote audio
 * and its level (WebAudio AnalyserNode), mute, hang up. The protocol is docs/BROWSER-CALLS.md.
 */
import { dbfsOf, rmsOf } from './level.ts';
import { signallingUrl } from './signalling-url.ts';

export type CallState = 'idle' | 'connecting' | 'ringing' | 'in-call' | 'ended' | 'failed';

export interface CallInfo {
  state: CallState;
  callId?: number;
  uuid?: string;
  endCause?: string;
  error?: string;
  muted: boolean;
}

type ServerMessage =
  | { type: 'ready'; ice_servers: RTCIceServer[] }
  | { type: 'answer'; sdp: string }
  | { type: 'candidate'; candidate: string; sdpMid: string | null; sdpMLineIndex: number | null }
  | { type: 'answered'; call_id: number; uuid: string }
  | { type: 'ended'; call_id: number; uuid: string; end_cause: string; status: string }
  | { type: 'error'; code: string; message: string };

/** Why the engine closed the socket, in words for the status line. */
const CLOSE_REASONS: Record<number, string> = {
  4400: 'The engine could not read a message.',
  4401: 'The API key was refused.',
  4403: 'This page’s origin may not place calls.',
  4408: 'The call timed out before it connected.',
  4429: 'Too many messages.',
  1001: 'The engine is shutting down.',
};

export class BrowserCall {
  private info: CallInfo = { state: 'idle', muted: false };
  private ws: WebSocket | undefined;
  private pc: RTCPeerConnection | undefined;
  private mic: MediaStream | undefined;
  private audioCtx: AudioContext | undefined;
  private analyser: AnalyserNode | undefined;
  private window: Float32Array<ArrayBuffer> | undefined;
  private pendingCandidates: RTCIceCandidateInit[] = [];
  private remoteSet = false;
  /** The far end's audio, for an <audio> element to play. */
  remoteStream: MediaStream | undefined;

  constructor(
    private readonly key: string,
    private readonly assistantId: number,
    private readonly onChange: (info: CallInfo) => void,
  ) {}

  get state(): CallState {
    return this.info.state;
  }

  async start(): Promise<void> {
    if (this.info.state !== 'idle') return;
    this.update({ state: 'connecting' });
    try {
      this.mic = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true } });
    } catch (err) {
      this.fail(`No microphone: ${(err as Error).message}`);
      return;
    }
    const ws = new WebSocket(signallingUrl(location));
    this.ws = ws;
    ws.onopen = () => ws.send(JSON.stringify({ type: 'auth', key: this.key }));
    ws.onmessage = (e) => {
      let msg: ServerMessage;
      try {
        msg = JSON.parse(String(e.data)) as ServerMessage;
      } catch {
        return;
      }
      this.onMessage(msg).catch((err: unknown) => this.fail((err as Error).message));
    };
    ws.onclose = (e) => {
      if (this.info.state === 'ended' || this.info.state === 'failed') return;
      this.fail(CLOSE_REASONS[e.code] ?? (e.reason || 'The connection to the engine closed.'));
    };
  }

  hangup(): void {
    if (this.ws?.readyState === WebSocket.OPEN && (this.info.state === 'ringing' || this.info.state === 'in-call')) {
      this.ws.send(JSON.stringify({ type: 'hangup' }));
      return; // `ended` follows, then the socket closes
    }
    this.update({ state: 'ended' });
    this.cleanup();
  }

  setMuted(muted: boolean): void {
    for (const t of this.mic?.getAudioTracks() ?? []) t.enabled = !muted;
    this.update({ muted });
  }

  /** The remote audio's level now, in dBFS (the meter's floor when nothing plays). */
  levelDbfs(): number {
    if (!this.analyser || !this.window) return dbfsOf(0);
    this.analyser.getFloatTimeDomainData(this.window);
    return dbfsOf(rmsOf(this.window));
  }

  private async onMessage(msg: ServerMessage): Promise<void> {
    switch (msg.type) {
      case 'ready':
        return this.offer(msg.ice_servers);
      case 'answer':
        await this.pc?.setRemoteDescription({ type: 'answer', sdp: msg.sdp });
        this.remoteSet = true;
        for (const c of this.pendingCandidates) await this.pc?.addIceCandidate(c);
        this.pendingCandidates = [];
        return;
      case 'candidate': {
        const c: RTCIceCandidateInit = { candidate: msg.candidate, sdpMid: msg.sdpMid, sdpMLineIndex: msg.sdpMLineIndex };
        if (this.remoteSet) await this.pc?.addIceCandidate(c);
        else this.pendingCandidates.push(c);
        return;
      }
      case 'answered':
        this.update({ state: 'in-call', callId: msg.call_id, uuid: msg.uuid });
        return;
      case 'ended':
        this.update({ state: 'ended', callId: msg.call_id, uuid: msg.uuid, endCause: msg.end_cause });
        this.cleanup();
        return;
      case 'error':
        this.fail(msg.message);
        return;
    }
  }

  private async offer(iceServers: RTCIceServer[]): Promise<void> {
    const pc = new RTCPeerConnection({ iceServers });
    this.pc = pc;
    for (const track of this.mic!.getAudioTracks()) pc.addTrack(track, this.mic!);
    pc.ontrack = (e) => {
      this.remoteStream = e.streams[0] ?? new MediaStream([e.track]);
      this.meter(this.remoteStream);
      this.update({});
    };
    pc.onicecandidate = (e) => {
      if (e.candidate && this.ws?.readyState === WebSocket.OPEN) {
        this.ws.send(JSON.stringify({ type: 'candidate', candidate: e.candidate.candidate, sdpMid: e.candidate.sdpMid, sdpMLineIndex: e.candidate.sdpMLineIndex }));
      }
    };
    const offer = await pc.createOffer();
    await pc.setLocalDescription(offer);
    this.ws?.send(JSON.stringify({ type: 'call', assistant_id: this.assistantId, sdp: offer.sdp }));
    this.update({ state: 'ringing' });
  }

  private meter(stream: MediaStream): void {
    this.audioCtx ??= new AudioContext();
    const source = this.audioCtx.createMediaStreamSource(stream);
    this.analyser = this.audioCtx.createAnalyser();
    this.analyser.fftSize = 1024;
    this.window = new Float32Array(this.analyser.fftSize);
    source.connect(this.analyser);
    void this.audioCtx.resume();
  }

  private fail(error: string): void {
    this.update({ state: 'failed', error });
    this.cleanup();
  }

  private update(patch: Partial<CallInfo>): void {
    this.info = { ...this.info, ...patch };
    this.onChange(this.info);
  }

  private cleanup(): void {
    for (const t of this.mic?.getTracks() ?? []) t.stop();
    this.pc?.close();
    if (this.ws && this.ws.readyState <= WebSocket.OPEN) this.ws.close(1000);
    void this.audioCtx?.close();
    this.audioCtx = undefined;
    this.analyser = undefined;
  }
}
