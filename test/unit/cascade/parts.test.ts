import { describe, expect, it } from 'vitest';
import { StereoRecorder, recordingPath } from '../../../src/call/recorder.ts';
import { readWav } from '../../../src/audio/wav.ts';
import { BusyCounter } from '../../../src/call/cascade/work.ts';
import { WakeTimer } from '../../../src/call/wake-timer.ts';
import { cascadeSettings } from '../../../src/call/cascade/options.ts';
import { EnergySttProvider, StandInLlm, sleep } from '../../../src/replay/stand-ins.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import type { SttEvent } from '../../../src/providers/stt/types.ts';

describe('StereoRecorder', () => {
  it('places each side by its time, not by arrival order', () => {
    const r = new StereoRecorder();
    r.assistant(1000, new Int16Array(16).fill(7));
    r.caller(500, new Int16Array(16).fill(3));
    const { left, right } = r.channels();
    expect(left.length).toBe(right.length);
    expect(left[500 * 16]).toBe(3);
    expect(left[1000 * 16]).toBe(0);
    expect(right[1000 * 16]).toBe(7);
    expect(right[500 * 16]).toBe(0);
    const wav = readWav(r.toWav());
    expect(wav.channels).toBe(2);
    expect(wav.samples[2 * 500 * 16]).toBe(3);
    expect(wav.samples[2 * 1000 * 16 + 1]).toBe(7);
    expect(recordingPath('/data', 'abc')).toBe('/data/recordings/abc.wav');
  });
});

describe('engine plumbing', () => {
  it('BusyCounter is idle only when tracked work has settled', async () => {
    const w = new BusyCounter();
    let resolve!: () => void;
    const p = w.track(new Promise<void>((r) => (resolve = r)));
    expect(w.idle).toBe(false);
    resolve();
    await p;
    expect(w.idle).toBe(true);
  });

  it('BusyCounter.hold() counts callback work until released, once', () => {
    const w = new BusyCounter();
    const a = w.hold();
    const b = w.hold();
    a();
    a();
    expect(w.idle).toBe(false);
    b();
    expect(w.idle).toBe(true);
  });

  it('WakeTimer fires once at the earliest wake', () => {
    const clock = new ManualClock(0);
    let fired = 0;
    const t = new WakeTimer<'a' | 'b'>(clock, () => clock.now(), () => fired++);
    t.set('a', 100);
    t.set('b', 50);
    t.set('b', undefined);
    clock.advance(99);
    expect(fired).toBe(0);
    clock.advance(1);
    expect(fired).toBe(1);
    expect(clock.pendingCount).toBe(0);
  });

  it('maps the assistant fields to core options', () => {
    const s = cascadeSettings(
      {
        id: 1,
        accountId: 1,
        mode: 'pipeline',
        config: { initial_message: 'Hi {{name}}', min_interrupt_words: 2, max_silence_duration: 5, reengagement_prompt: 'Ask {{name}}', variables: { name: 'Bo' }, tools: [{ type: 'end_call', data: { description: 'when done' } }] },
      },
      { name: 'Ada' },
    );
    expect(s.initialMessage).toBe('Hi Ada');
    expect(s.interruption.minInterruptWords).toBe(2);
    expect(s.rules.maxSilenceMs).toBe(5000);
    expect(s.rules.reengagementPrompt).toBe('Ask Ada');
    expect(s.endCallTool).toEqual({ description: 'when done' });
    expect(s.noiseCancellation).toBe(true);
  });
});

describe('stand-ins', () => {
  it('EnergyStt reveals words while voiced and finalizes after 400 ms of quiet', async () => {
    const stt = new EnergySttProvider(() => 'one two three');
    const ctl = new AbortController();
    const s = stt.open({ language: 'en', signal: ctl.signal, sampleRate: 16000 });
    const loud = { samples: new Int16Array(320).fill(8000), sampleRate: 16000 };
    const quiet = { samples: new Int16Array(320), sampleRate: 16000 };
    for (let i = 0; i < 35; i++) s.write(loud);
    for (let i = 0; i < 20; i++) s.write(quiet);
    await s.close();
    const events: SttEvent[] = [];
    for await (const e of s) events.push(e);
    expect(events.map((e) => (e.type === 'error' ? 'error' : `${e.type}:${e.text}`))).toEqual([
      'interim:one',
      'interim:one two',
      'final:one two three',
    ]);
  });

  it('StandInLlm waits on the clock and stops when aborted', async () => {
    const clock = new ManualClock(0);
    const llm = new StandInLlm(clock, { content: 'hi', delayMs: 1000 });
    const ctl = new AbortController();
    const p = llm.complete({ model: 'x', messages: [], signal: ctl.signal });
    ctl.abort(new Error('barge-in'));
    await expect(p).rejects.toThrow('barge-in');
    await expect(sleep(clock, 0)).resolves.toBeUndefined();
  });
});
