/** The realtime Player: pacing on the clock, exact sent position after a flush, clip order. */
import { describe, expect, it } from 'vitest';
import type { AudioFrame } from '../../../src/audio/frame.ts';
import { Player } from '../../../src/call/realtime/player.ts';
import type { OutboundAudio } from '../../../src/media/media-types.ts';
import { ManualClock } from '../../../src/util/clock.ts';

/** An outbound that sends one queued frame per 20 ms, like the RTP pacer. */
function media(clock: ManualClock) {
  const queue: AudioFrame[] = [];
  const sent: AudioFrame[] = [];
  const pop = (): void => {
    const f = queue.shift();
    if (f) sent.push(f);
    clock.setTimeout(pop, 20);
  };
  clock.setTimeout(pop, 20);
  const out: OutboundAudio = {
    write: (f) => (queue.push(f), true),
    writeStream: async () => {},
    flush: () => queue.splice(0).length,
    get playing() {
      return queue.length > 0;
    },
  };
  return { out, queue, sent };
}

const frame = (v: number): Int16Array => new Int16Array(320).fill(v);

function setup(leadFrames = 3) {
  const clock = new ManualClock();
  const t0 = clock.now();
  const m = media(clock);
  const events: string[] = [];
  const player = new Player({
    clock,
    now: () => clock.now() - t0,
    outbound: m.out,
    leadFrames,
    events: { onStart: (k, at) => events.push(`start ${k} ${at}`), onEnd: (k, at, i) => events.push(`end ${k} ${at}${i ? ' cut' : ''}`) },
  });
  player.start();
  return { clock, player, events, ...m };
}

describe('realtime Player', () => {
  it('keeps only the lead on the media and paces the rest on the clock', () => {
    const { clock, player, queue, events } = setup();
    for (let i = 0; i < 10; i++) player.push('a', frame(i + 1));
    player.finish('a');
    expect(queue).toHaveLength(3);
    expect(events).toEqual(['start a 0']);
    clock.advance(400);
    expect(events).toEqual(['start a 0', 'end a 200']);
    expect(player.busy).toBe(false);
  });

  it('after a flush, sent = frames written minus frames the media dropped', () => {
    const { clock, player, sent, events } = setup(4);
    for (let i = 0; i < 50; i++) player.push('a', frame(1));
    clock.advance(130);
    const cut = player.interrupt();
    expect(cut).toEqual([{ key: 'a', sentFrames: sent.length, playedMs: sent.length * 20, started: true }]);
    expect(events.at(-1)).toBe('end a 130 cut');
    const before = sent.length;
    clock.advance(200);
    expect(sent.length).toBe(before);
  });

  it('plays clips back to back and attributes a flush to the newest frames', () => {
    const { clock, player, sent } = setup(5);
    for (let i = 0; i < 3; i++) player.push('a', frame(1));
    player.finish('a');
    for (let i = 0; i < 10; i++) player.push('b', frame(2));
    clock.advance(60);
    const cut = player.interrupt();
    const sentA = sent.filter((f) => f.samples[0] === 1).length;
    const sentB = sent.filter((f) => f.samples[0] === 2).length;
    expect(cut.find((c) => c.key === 'b')!.sentFrames).toBe(sentB);
    if (cut.some((c) => c.key === 'a')) expect(cut.find((c) => c.key === 'a')!.sentFrames).toBe(sentA);
  });

  it('a clip that never had audio ends quietly', () => {
    const { player, events } = setup();
    expect(player.finish('nothing')).toBe(false);
    expect(events).toEqual([]);
  });
});
