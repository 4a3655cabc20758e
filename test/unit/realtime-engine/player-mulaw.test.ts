/**
 * The realtime Player in μ-law pass-through, over the real outbound RTP path (OutboundPath on
 * the shared media clock), all on one ManualClock: the model's payloads leave as they are at one
 * per 20 ms, a barge-in flushes them at once, and the position the Player reports (the model's
 * truncation `audio_end_ms`) is exactly the audio that left as packets.
 */
import { describe, expect, it } from 'vitest';
import { Player } from '../../../src/call/realtime/player.ts';
import { StereoRecorder } from '../../../src/call/recorder.ts';
import { OutboundPath, type OutboundPacket } from '../../../src/media/rtp-session-outbound.ts';
import type { OutboundAudio } from '../../../src/media/media-types.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { pcmuMedia } from '../../support/negotiated-media.ts';

const MEDIA = pcmuMedia();

/** A model payload: loud, and numbered in its first byte so packets can be traced back. */
const payload = (n: number): Uint8Array => Uint8Array.from({ length: 160 }, (_, i) => (i === 0 ? n : 0x20 + (i % 64)));

function setup(leadFrames = 3) {
  const clock = new ManualClock();
  const t0 = clock.now();
  const sent: (OutboundPacket & { atMs: number })[] = [];
  const path = new OutboundPath(MEDIA, { clock, send: (p) => sent.push({ ...p, atMs: clock.now() - t0 }), initialTimestamp: 0 });
  path.setSending(true);
  const outbound: OutboundAudio = path;
  const events: string[] = [];
  const recorder = new StereoRecorder();
  const player = new Player({
    clock,
    now: () => clock.now() - t0,
    outbound,
    recorder,
    leadFrames,
    events: { onStart: (k, at) => events.push(`start ${k} ${at}`), onEnd: (k, at, i) => events.push(`end ${k} ${at}${i ? ' cut' : ''}`) },
  });
  player.start();
  const speech = (): (OutboundPacket & { atMs: number })[] => sent.filter((p) => p.payload.some((b) => b !== 0xff));
  return { clock, player, path, sent, speech, events, recorder };
}

describe('realtime Player, μ-law pass-through', () => {
  it('paces the model payloads out one per 20 ms, untouched, keeping only the lead queued', () => {
    const { clock, player, path, speech, events } = setup(3);
    clock.advance(33);
    const model = Array.from({ length: 25 }, (_, i) => payload(i + 1));
    expect(player.pushAllMulaw('item', model)).toBe(25);
    player.finish('item');
    // The first packet left with the delta; the player queued only its lead on the media.
    expect(speech()).toHaveLength(1);
    expect(speech()[0]!.atMs).toBe(33);
    clock.advance(10);
    expect(path.playing).toBe(true);
    clock.advance(600);
    const out = speech();
    expect(out.map((p) => p.payload)).toEqual(model);
    // Once started, one packet per slot of the shared media clock.
    const gaps = out.slice(1).map((p, i) => p.atMs - out[i]!.atMs);
    expect(gaps.slice(1).every((g) => g === 20)).toBe(true);
    expect(events[0]).toBe('start item 33');
    expect(events.at(-1)).toBe('end item 533');
    path.close();
  });

  it('barge-in: nothing more leaves, and the sent position is exactly the packets sent', () => {
    const { clock, player, path, sent, speech, events } = setup(4);
    clock.advance(7);
    player.pushAllMulaw('item', Array.from({ length: 100 }, (_, i) => payload(i + 1)));
    clock.advance(301);
    const cut = player.interrupt();
    const before = speech().length;
    expect(cut).toEqual([{ key: 'item', sentFrames: before, playedMs: before * 20, started: true }]);
    // 160 bytes = 20 ms: the truncation position equals the μ-law that really went out.
    expect(cut[0]!.playedMs).toBe((speech().reduce((n, p) => n + p.payload.length, 0) / 160) * 20);
    expect(events.at(-1)).toBe('end item 308 cut');
    const packets = sent.length;
    clock.advance(200);
    expect(speech()).toHaveLength(before);
    // The line goes on with silence, on the grid.
    expect(sent.length).toBeGreaterThan(packets);
    path.close();
  });

  it('records the passed-through audio decoded at 16 kHz, where it played', () => {
    const { clock, player, recorder, path } = setup();
    clock.advance(100);
    player.pushAllMulaw('item', Array.from({ length: 10 }, (_, i) => payload(i + 1)));
    player.finish('item');
    clock.advance(400);
    const { right } = recorder.channels();
    expect(right.length).toBe(16 * 300);
    const level = (a: Int16Array): number => Math.sqrt(a.reduce((s, v) => s + v * v, 0) / Math.max(1, a.length));
    expect(level(right.subarray(0, 16 * 100))).toBe(0);
    expect(level(right.subarray(16 * 120, 16 * 280))).toBeGreaterThan(1000);
    path.close();
  });
});
