/**
 * ModelLink's caller audio across a reconnect: frames that come while a new connection is being
 * opened are held (the latest HOLD_MS) and go to it first; a failed reconnect drops them.
 */
import { describe, expect, it } from 'vitest';
import type { AudioFrame } from '../../../src/audio/frame.ts';
import { HOLD_MS, ModelLink } from '../../../src/call/realtime/model-link.ts';
import type { RealtimeConnection, RealtimeEvent, RealtimeProvider, RealtimeSessionConfig } from '../../../src/providers/realtime/realtime.ts';

/** A connection that records what it is sent; its events end when closed. */
function fakeConnection(inputFormat: RealtimeSessionConfig['inputFormat'], sent: string[]): RealtimeConnection {
  let finish: (() => void) | undefined;
  const ended = new Promise<void>((r) => (finish = r));
  const events: AsyncIterable<RealtimeEvent> = {
    async *[Symbol.asyncIterator]() {
      await ended;
    },
  };
  const noop = () => undefined;
  return {
    events,
    counters: {} as RealtimeConnection['counters'],
    session: { inputFormat } as RealtimeSessionConfig,
    appendAudio: (f: AudioFrame) => sent.push(`pcm:${f.samples[0]}`),
    appendMulaw: (b: Uint8Array) => sent.push(`ulaw:${b[0]}:${b.length}`),
    commit: noop,
    clearInput: noop,
    createResponse: noop,
    cancelResponse: noop,
    sendFunctionResult: noop,
    addFunctionCall: noop,
    addUserText: (t: string) => sent.push(`user:${t}`),
    addAssistantText: noop,
    deleteItem: noop,
    truncate: noop,
    receivedMs: () => 0,
    updateSession: noop,
    close: () => finish?.(),
  };
}

/** A provider whose connects are answered (or refused) by the test, one at a time. */
function gatedProvider(inputFormat: RealtimeSessionConfig['inputFormat'] = 'pcm24k') {
  const sent: string[][] = [];
  const gates: { open: () => void; refuse: () => void }[] = [];
  const provider: RealtimeProvider = {
    label: 'fake',
    capabilities: {} as RealtimeProvider['capabilities'],
    connect: () =>
      new Promise<RealtimeConnection>((resolve, reject) => {
        const log: string[] = [];
        gates.push({ open: () => (sent.push(log), resolve(fakeConnection(inputFormat, log))), refuse: () => reject(new Error('refused')) });
      }),
  };
  return { provider, sent, gates };
}

function link(provider: RealtimeProvider, attempts = 1): ModelLink {
  return new ModelLink({
    provider,
    model: 'm',
    apiKey: 'k',
    session: {} as RealtimeSessionConfig,
    work: { track: <T>(p: Promise<T>) => p } as never,
    signal: new AbortController().signal,
    attempts,
    onEvent: () => undefined,
    onLost: () => undefined,
  });
}

const pcm = (n: number): AudioFrame => ({ samples: Int16Array.of(n, ...new Array<number>(319).fill(0)), sampleRate: 16_000 });
const ulawFrame = (n: number, scratch: Uint8Array): AudioFrame => {
  scratch.fill(n);
  return { samples: new Int16Array(320), sampleRate: 16_000, mulaw: scratch } as AudioFrame;
};
const tick = () => new Promise((r) => setImmediate(r));

describe('ModelLink across a reconnect', () => {
  it('sends frames held during a reconnect to the new connection first, after the re-seed', async () => {
    const { provider, sent, gates } = gatedProvider();
    const l = link(provider);
    const first = l.open([]);
    await tick();
    gates[0]!.open();
    expect(await first).toBe(true);
    l.appendAudio(pcm(1));
    // The connection drops; a reconnect starts and the caller keeps talking meanwhile.
    const again = l.open([{ role: 'user', text: 'hello' }]);
    l.appendAudio(pcm(2));
    l.appendAudio(pcm(3));
    expect(l.heldFrames).toBe(2);
    await tick();
    gates[1]!.open();
    expect(await again).toBe(true);
    l.appendAudio(pcm(4));
    expect(sent[0]).toEqual(['pcm:1']);
    expect(sent[1]).toEqual(['user:hello', 'pcm:2', 'pcm:3', 'pcm:4']);
    expect(l.heldFrames).toBe(0);
  });

  it('keeps only the latest HOLD_MS, and copies μ-law bytes the media path reuses', async () => {
    const { provider, sent, gates } = gatedProvider('pcmu');
    const l = link(provider);
    const opening = l.open([]);
    const scratch = new Uint8Array(160);
    const frames = HOLD_MS / 20 + 10;
    for (let i = 0; i < frames; i++) l.appendAudio(ulawFrame(i % 200, scratch));
    expect(l.heldFrames).toBe(HOLD_MS / 20);
    await tick();
    gates[0]!.open();
    await opening;
    expect(sent[0]).toHaveLength(HOLD_MS / 20);
    // The oldest ten went; each held frame kept its own bytes although the scratch was reused.
    expect(sent[0]![0]).toBe('ulaw:10:160');
    expect(sent[0]!.at(-1)).toBe(`ulaw:${(frames - 1) % 200}:160`);
  });

  it('drops what it held when the reconnect fails, and holds nothing while no connect is under way', async () => {
    const { provider, sent, gates } = gatedProvider();
    const l = link(provider);
    const opening = l.open([]);
    l.appendAudio(pcm(7));
    await tick();
    gates[0]!.refuse();
    expect(await opening).toBe(false);
    expect(l.heldFrames).toBe(0);
    l.appendAudio(pcm(8));
    expect(l.heldFrames).toBe(0);
    expect(sent).toEqual([]);
  });
});
