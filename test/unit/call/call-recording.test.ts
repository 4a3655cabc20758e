import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventEmitter } from 'eventemitter3';
import { afterEach, describe, expect, it } from 'vitest';
import { readWav } from '../../../src/audio/wav.ts';
import { CallRecording } from '../../../src/call/call-recording.ts';
import { parseCallTape } from '../../../src/call/tape.ts';
import type { InboundTap } from '../../../src/media/rtp-session.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { CallerStream, g711Media } from '../../support/call-tape.ts';

/** The CallSession as a recording sees it: events, and media that a tap can be attached to. */
class FakeCall extends EventEmitter<{ dtmf: (e: { digit: string; durationMs: number }) => void; ended: (info: { cause: string }) => void }> {
  readonly uuid = 'call-uuid';
  readonly direction = 'inbound';
  tap: InboundTap | undefined;
  readonly taps: Array<InboundTap | undefined> = [];
  readonly media = {
    tapInbound: (tap: InboundTap | undefined) => {
      this.taps.push(tap);
      this.tap = tap;
      // As RtpSession does: a started session reports its media at once.
      tap?.media(g711Media(), this.clock.monotonic());
    },
  };
  constructor(private readonly clock: ManualClock) {
    super();
  }
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const tone = (n: number, value: number): Int16Array => new Int16Array(n).fill(value);

describe('CallRecording: one WAV and one tape per call, across engine runs', () => {
  it('starts with the first recording run, spans the later ones on one timeline, and saves both at the end', async () => {
    const clock = new ManualClock(1_000_000);
    const call = new FakeCall(clock);
    const dir = mkdtempSync(join(tmpdir(), 'sb-callrec-'));
    dirs.push(dir);
    const rec = new CallRecording(call, clock, dir);

    // A first run without `record`: nothing is kept, no tap.
    expect(rec.forRun({ id: 1, record: false })).toBeUndefined();
    expect(call.taps).toEqual([]);
    clock.advance(1_000);

    // The run that records (an assistant swap at 1 s): the tap is attached, its audio lands at 1 s.
    const first = rec.forRun({ id: 2, record: true })!;
    expect(call.tap).toBeDefined();
    first.assistant(0, tone(1_600, 1_000)); // 100 ms at 1.0 s
    first.caller(200, tone(1_600, 2_000)); // 100 ms at 1.2 s
    const packets = new CallerStream(7, 0).audio(1_000, 10, 300).sorted();
    for (const a of packets) {
      clock.advance(a.atMs - (clock.monotonic() - 1_000_000));
      call.tap!.packet(a.packet, clock.monotonic());
    }
    clock.advance(1_800 - (clock.monotonic() - 1_000_000));
    call.emit('dtmf', { digit: '9', durationMs: 80 });

    // The next run (its assistant does not record) writes on: its 0 is 2.5 s into the call.
    clock.advance(700);
    const second = rec.forRun({ id: 3, record: false })!;
    expect(second).toBeDefined();
    second.assistant(100, tone(1_600, 3_000)); // 100 ms at 2.6 s
    clock.advance(900);
    call.emit('ended', { cause: 'remote-hangup' });

    const saved = (await rec.save('remote-hangup'))!;
    expect(saved).toEqual({ recording: join(dir, 'recordings', 'call-uuid.wav'), tape: join(dir, 'recordings', 'call-uuid.tape.json') });
    expect(call.taps.at(-1)).toBeUndefined();
    // save is once.
    expect(await rec.save()).toBe(saved);

    const wav = readWav(readFileSync(saved.recording));
    expect(wav.channels).toBe(2);
    const at = (ms: number, channel: 0 | 1): number => wav.samples[Math.round((ms * 16_000) / 1000) * 2 + channel]!;
    expect(wav.samples.length / 2).toBe(Math.round(2.7 * 16_000));
    expect(at(950, 1)).toBe(0);
    expect(at(1_050, 1)).toBe(1_000);
    expect(at(1_250, 0)).toBe(2_000);
    expect(at(2_550, 1)).toBe(0);
    expect(at(2_650, 1)).toBe(3_000);

    const tape = parseCallTape(JSON.parse(readFileSync(saved.tape, 'utf8')));
    expect(tape).toMatchObject({ call: { uuid: 'call-uuid', direction: 'inbound' }, startedAtMs: 1_000, endedAtMs: 3_400, truncated: false });
    expect(tape.packets.map((p) => p.atMs)).toEqual(packets.map((a) => a.atMs));
    expect(tape.events).toEqual([
      { atMs: 0, type: 'answered' },
      { atMs: 1_000, type: 'engine-run', assistantId: 2 },
      { atMs: 1_800, type: 'dtmf', digit: '9', durationMs: 80 },
      { atMs: 2_500, type: 'engine-run', assistantId: 3 },
      { atMs: 3_400, type: 'hangup', cause: 'remote-hangup' },
    ]);
  });

  it('starts at the answer when asked to, before any run', async () => {
    const clock = new ManualClock(0);
    const call = new FakeCall(clock);
    const dir = mkdtempSync(join(tmpdir(), 'sb-callrec-'));
    dirs.push(dir);
    const rec = new CallRecording(call, clock, dir);
    rec.start();
    rec.start();
    expect(call.taps).toHaveLength(1);
    clock.advance(3_000);
    // The first run (voicemail detection came before it) writes 3 s in; forRun does not restart.
    rec.forRun({ id: 5, record: true })!.caller(0, tone(160, 500));
    expect(call.taps).toHaveLength(1);
    const saved = (await rec.save('local-hangup'))!;
    const tape = parseCallTape(JSON.parse(readFileSync(saved.tape, 'utf8')));
    expect(tape.startedAtMs).toBe(0);
    expect(tape.events.find((e) => e.type === 'engine-run')).toEqual({ atMs: 3_000, type: 'engine-run', assistantId: 5 });
    const wav = readWav(readFileSync(saved.recording));
    expect(wav.samples[3 * 16_000 * 2]).toBe(500);
  });

  it('saves nothing for a call no run recorded, and closes a tape whose hang-up was not reported', async () => {
    const clock = new ManualClock(0);
    const dir = mkdtempSync(join(tmpdir(), 'sb-callrec-'));
    dirs.push(dir);
    const quiet = new CallRecording(new FakeCall(clock), clock, dir);
    quiet.forRun({ id: 1, record: false });
    expect(await quiet.save('local-hangup')).toBeUndefined();

    const call = new FakeCall(clock);
    const rec = new CallRecording(call, clock, dir);
    rec.forRun({ id: 1, record: true });
    clock.advance(500);
    const saved = (await rec.save('error'))!;
    const tape = parseCallTape(JSON.parse(readFileSync(saved.tape, 'utf8')));
    expect(tape.events.at(-1)).toEqual({ atMs: 500, type: 'hangup', cause: 'error' });
    // After saving, a later run gets nothing to write into.
    expect(rec.forRun({ id: 1, record: true })).toBeUndefined();
  });

  it("keeps each engine run's timeline on the tape, in ms from answer (the console's turn timeline reads it)", async () => {
    const clock = new ManualClock(0);
    const call = new FakeCall(clock);
    const dir = mkdtempSync(join(tmpdir(), 'sb-callrec-'));
    dirs.push(dir);
    const rec = new CallRecording(call, clock, dir);
    rec.start();
    clock.advance(200);
    rec.forRun({ id: 1, record: true });
    clock.advance(3_000);
    rec.runTimeline([
      { type: 'vad-speech-start', atMs: 1_000, detectedAtMs: 1_100 } as never,
      { type: 'end-of-turn', atMs: 2_000, waitedMs: 400, reason: 'semantic', transcript: 'hi', taken: true } as never,
    ]);
    rec.forRun({ id: 2, record: true });
    clock.advance(1_000);
    rec.runTimeline([{ type: 'filler', atMs: 300, text: 'Hmm.', category: 'thinking' } as never]);
    const saved = (await rec.save('remote-hangup'))!;
    const tape = parseCallTape(JSON.parse(readFileSync(saved.tape, 'utf8')));
    expect(tape.timeline).toEqual([
      { type: 'vad-speech-start', atMs: 1_200, detectedAtMs: 1_300 },
      { type: 'end-of-turn', atMs: 2_200, waitedMs: 400, reason: 'semantic', transcript: 'hi', taken: true },
      { type: 'filler', atMs: 3_500, text: 'Hmm.', category: 'thinking' },
    ]);
  });
});
