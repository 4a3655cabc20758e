import { describe, expect, it } from 'vitest';
import type { AudioFrame } from '../../../src/audio/frame.ts';
import { AmbientMixer } from '../../../src/audio/mixer.ts';
import { Speaker } from '../../../src/call/cascade/speaker.ts';
import type { OutboundAudio } from '../../../src/media/media-types.ts';
import { ManualClock } from '../../../src/util/clock.ts';

class FakeOutbound implements OutboundAudio {
  queue: AudioFrame[] = [];
  writes: { atMs: number; frame: AudioFrame }[] = [];
  flushed = 0;
  constructor(private readonly now: () => number) {}
  write(frame: AudioFrame): boolean {
    this.queue.push(frame);
    this.writes.push({ atMs: this.now(), frame });
    return true;
  }
  async writeStream(): Promise<void> {}
  flush(): number {
    const n = this.queue.length;
    this.flushed += n;
    this.queue = [];
    return n;
  }
  get playing(): boolean {
    return this.queue.length > 0;
  }
}

function setup(ambient = false) {
  const clock = new ManualClock(0);
  const out = new FakeOutbound(() => clock.now());
  const events: string[] = [];
  const mixer = ambient ? new AmbientMixer({ samples: new Int16Array(320).fill(10), sampleRate: 16000, levelDbfs: -70 }) : undefined;
  const speaker = new Speaker({
    clock,
    now: () => clock.now(),
    outbound: out,
    ambient: mixer,
    events: {
      onStart: (turn, at) => events.push(`start ${turn}@${at}`),
      onEnd: (turn, at, interrupted) => events.push(`end ${turn}@${at}${interrupted ? ' cut' : ''}`),
    },
  });
  speaker.start();
  return { clock, out, events, speaker };
}

const frame = (v: number) => new Int16Array(320).fill(v);

describe('Speaker', () => {
  it('writes speech at once, keeps three frames ahead, and ends when the last frame has played', () => {
    const { clock, out, events, speaker } = setup();
    speaker.open(1);
    for (let i = 1; i <= 10; i++) speaker.push(1, 0, frame(i));
    speaker.finish(1);
    expect(out.writes.map((w) => w.atMs)).toEqual([0, 0, 0]);
    expect(events).toEqual(['start 1@0']);
    clock.advance(20);
    expect(out.writes).toHaveLength(4);
    clock.advance(200);
    expect(out.writes.map((w) => w.frame.samples[0])).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(events).toEqual(['start 1@0', 'end 1@200']);
    expect(speaker.speaking).toBe(false);
  });

  it('without a bed, keeps no timer while it has nothing to pace, and wakes on the next push', () => {
    const { clock, out, events, speaker } = setup();
    expect(clock.pendingCount).toBe(0);
    speaker.open(1);
    for (let i = 1; i <= 3; i++) speaker.push(1, 0, frame(i));
    speaker.finish(1);
    expect(clock.pendingCount).toBe(1);
    clock.advance(100);
    expect(events).toEqual(['start 1@0', 'end 1@60']);
    expect(clock.pendingCount).toBe(0);
    // 27 ms after the last tick: the next reply starts at once, then paces every 20 ms in the
    // media clock's passes (with no other media on this clock, its grid starts at the wake-up).
    clock.advance(27);
    speaker.open(2);
    for (let i = 1; i <= 5; i++) speaker.push(2, 0, frame(10 + i));
    speaker.finish(2);
    expect(out.writes.slice(3).map((w) => w.atMs)).toEqual([127, 127, 127]);
    clock.advance(120);
    expect(out.writes.slice(3).map((w) => [w.atMs, w.frame.samples[0]])).toEqual([
      [127, 11], [127, 12], [127, 13], [147, 14], [167, 15],
    ]);
    expect(events.slice(2)).toEqual(['start 2@127', 'end 2@227']);
    expect(clock.pendingCount).toBe(0);
  });

  it('interrupt drops what has not played and reports the played ms', () => {
    const { clock, out, events, speaker } = setup();
    speaker.open(1);
    for (let i = 1; i <= 50; i++) speaker.push(1, 0, frame(i));
    clock.advance(100);
    expect(speaker.interrupt()).toBe(100);
    expect(out.queue).toEqual([]);
    expect(events).toEqual(['start 1@0', 'end 1@100 cut']);
    const n = out.writes.length;
    clock.advance(200);
    expect(out.writes).toHaveLength(n);
  });

  it('pause holds the reply where it was and resume plays every frame once', () => {
    const { clock, out, speaker } = setup();
    speaker.open(1);
    for (let i = 1; i <= 20; i++) speaker.push(1, 0, frame(i));
    clock.advance(40);
    speaker.pause();
    clock.advance(200);
    speaker.resume();
    clock.advance(1000);
    const played = out.writes.map((w) => w.frame.samples[0]);
    // Frames flushed at the pause come back in order; none is lost, the ones that played are not repeated.
    const kept = played.filter((v, i) => played.indexOf(v) === i);
    expect(kept).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('ducks speech while an overlap is undecided', () => {
    const { out, speaker } = setup();
    speaker.duck(true);
    speaker.open(1);
    speaker.push(1, 0, frame(1000));
    expect(out.writes[0]!.frame.samples[0]).toBe(250);
  });

  it('with a bed, sends frames continuously and speech preempts the queued bed', () => {
    const { clock, out, events, speaker } = setup(true);
    expect(out.writes).toHaveLength(3);
    clock.advance(100);
    expect(out.queue.length).toBeGreaterThan(0);
    speaker.open(1);
    speaker.push(1, 0, frame(100));
    expect(out.flushed).toBeGreaterThan(0);
    expect(out.queue[0]!.samples[0]).toBe(110);
    expect(events).toEqual(['start 1@100']);
  });
});
