import type { Api } from '../api.ts';
import { SseParser } from './sse.ts';

/**
 * The live call feed: GET /api/user/calls/events (text/event-stream, the account's calls only).
 * On connect the server sends every live call as a `call` event, then as things happen:
 *   call        the call record, shaped as GET /user/calls/:id answers, on start, answer and end
 *   transcript  {call_id, uuid, entry}: a transcript line as the call's `transcript` array holds it
 *   timeline    {call_id, uuid, event}: a call tape event as the call's tape holds it
 * `?call_id=N` follows one call. Comments keep the connection alive. On a dropped connection the
 * feed reconnects with backoff until the signal aborts.
 */

export type FeedEvent =
  | { type: 'call'; call: Record<string, unknown> & { id: number; uuid: string; status: string } }
  | { type: 'transcript'; call_id: number; uuid: string; entry: Record<string, unknown> }
  | { type: 'timeline'; call_id: number; uuid: string; event: Record<string, unknown> }
  | { type: 'connected' }
  | { type: 'disconnected'; error?: string };

export function openFeed(api: Api, opts: { callId?: number }, onEvent: (e: FeedEvent) => void, signal: AbortSignal): void {
  const path = `/user/calls/events${opts.callId !== undefined ? `?call_id=${opts.callId}` : ''}`;
  let delayMs = 500;
  const run = async () => {
    while (!signal.aborted) {
      try {
        const res = await api.open(path, signal);
        onEvent({ type: 'connected' });
        delayMs = 500;
        const parser = new SseParser();
        const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          for (const e of parser.push(value)) {
            const data = JSON.parse(e.data) as Record<string, unknown>;
            if (e.event === 'call') onEvent({ type: 'call', call: data as never });
            else if (e.event === 'transcript' || e.event === 'timeline') onEvent({ type: e.event, ...data } as FeedEvent);
          }
        }
        onEvent({ type: 'disconnected' });
      } catch (err) {
        if (signal.aborted) return;
        onEvent({ type: 'disconnected', error: err instanceof Error ? err.message : String(err) });
      }
      await new Promise((r) => setTimeout(r, delayMs));
      delayMs = Math.min(delayMs * 2, 10_000);
    }
  };
  void run();
}
