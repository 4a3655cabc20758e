/**
 * The built-in diagnostics an operator dials to check a trunk's audio path with no AI provider:
 *
 * - `echo` / `*43`: the caller hears themself ~200 ms later. Fixed delay (10 frames) because an
 *   instant echo is masked by the caller's own sidetone and hard to judge by ear.
 * - `tone` / `*44`: a 1 kHz tone, one second on, one second off, until hang-up (level and
 *   one-way audio checks; the 1 kHz reference is what telco test lines use).
 *
 * Both run on the session's media seam only, exactly where an AI engine would sit.
 */
import { FRAME_SAMPLES, SAMPLE_RATE, type AudioFrame } from '../audio/frame.ts';
import type { DiagnosticMode } from './inbound-router.ts';
import type { CallSession } from './call-session.ts';

export const ECHO_DELAY_FRAMES = 10;

export async function runDiagnostics(session: CallSession, mode: DiagnosticMode): Promise<void> {
  if (mode === 'echo') await runEcho(session);
  else await runTone(session);
}

async function runEcho(session: CallSession): Promise<void> {
  const delay: AudioFrame[] = [];
  // Inbound yields one frame per 20 ms (silence included), so a fixed-length FIFO is a fixed delay.
  for await (const frame of session.inbound) {
    if (session.state !== 'active') break;
    delay.push(frame);
    if (delay.length > ECHO_DELAY_FRAMES) session.outbound.write(delay.shift()!);
  }
}

async function runTone(session: CallSession): Promise<void> {
  const stop = new AbortController();
  session.once('ended', () => stop.abort());
  if (session.state !== 'active') return;
  await session.outbound.writeStream(toneFrames(stop.signal), stop.signal);
}

/** 1 kHz at -10 dBFS for 1 s, then 1 s of silence, repeated. */
export async function* toneFrames(signal: AbortSignal, hz = 1000): AsyncGenerator<AudioFrame> {
  const amplitude = Math.round(32767 * 10 ** (-10 / 20));
  let n = 0;
  while (!signal.aborted) {
    for (let f = 0; f < 100 && !signal.aborted; f++) {
      const samples = new Int16Array(FRAME_SAMPLES);
      if (f < 50) {
        for (let i = 0; i < samples.length; i++) samples[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * (n + i)) / SAMPLE_RATE));
      }
      n += samples.length;
      yield { samples, sampleRate: SAMPLE_RATE };
    }
  }
}
