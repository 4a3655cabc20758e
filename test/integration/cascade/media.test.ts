/**
 * What goes out besides the reply: fillers, the ambient bed, and the stereo recording.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FRAME_SAMPLES, rmsDbfs } from '../../../src/audio/frame.ts';
import { readWav } from '../../../src/audio/wav.ts';
import { fixture, runCall, say } from './harness.ts';
import { testTempDir } from '../../support/temp-dir.ts';

describe('cascade: fillers', () => {
  it('plays a filler fitting the question when the LLM is slow, then the reply', async () => {
    const { result, events, tts, media } = await runCall({
      config: { fillers: true },
      llm: (l) => l.queue.push({ content: 'We open at nine.', delayMs: 2000 }),
      script: { items: [say('utt-opening-hours', 4000)], hangUpAtMs: 14_000 },
    });
    const eot = events('end-of-turn')[0]!;
    const [filler] = events('filler');
    expect(filler).toMatchObject({ atMs: eot.atMs + 600, category: 'question', text: 'Good question, let me check.' });
    expect(tts.spoken).toEqual(['Hello, thanks for calling Luigi.', 'How can I help?', 'Good question, let me check.', 'We open at nine.']);
    const runs = media.audibleRuns();
    expect(runs[1]!.startMs - filler!.atMs).toBeLessThanOrEqual(20);
    const reply = result.transcript.find((e) => e.kind === 'reply')!;
    expect(reply).toMatchObject({ text: 'We open at nine.', fillers: ['Good question, let me check.'] });
    expect(reply.latency!.llmFirstTokenMs).toBe(2000);
    // The reply proper follows the filler without a gap.
    expect(reply.latency!.firstFrameOutMs).toBe(600 + tts.durationMs('Good question, let me check.'));
    // Not in the agent's history: it was not an answer.
    expect(result.history.some((m) => m.content.includes('Good question'))).toBe(false);
  });

  it('plays no filler when the reply is quick', async () => {
    const { events } = await runCall({ config: { fillers: true }, script: { items: [say('utt-opening-hours', 4000)], hangUpAtMs: 12_000 } });
    expect(events('filler')).toEqual([]);
  });
});

describe('cascade: ambient sound', () => {
  it('mixes the bed under speech and silence, never sending digital silence', async () => {
    const script = { items: [say('utt-opening-hours', 4000)], hangUpAtMs: 12_000 };
    const plain = await runCall({ script });
    const bed = await runCall({ config: { ambient_sound: 'office', ambient_sound_volume: 0.5 }, script });
    expect(bed.events('assistant-audio-start').map((e) => e.atMs)).toEqual(plain.events('assistant-audio-start').map((e) => e.atMs));
    const plainAt = new Map(plain.media.played.map((s) => [s.atMs, s.samples]));
    let speechSlots = 0;
    let silentSlots = 0;
    for (const slot of bed.media.played) {
      // Every slot carries audio: the line never drops to comfort silence.
      expect(slot.samples).toBeDefined();
      const dry = plainAt.get(slot.atMs);
      const residual = new Int16Array(FRAME_SAMPLES);
      for (let i = 0; i < FRAME_SAMPLES; i++) residual[i] = slot.samples![i]! - (dry?.[i] ?? 0);
      // office @ 0.5 → about -34 dBFS RMS (src/audio/mixer.ts); per-frame levels vary around it.
      const level = rmsDbfs(residual);
      expect(level).toBeGreaterThan(-46);
      expect(level).toBeLessThan(-26);
      if (dry) speechSlots++;
      else silentSlots++;
    }
    expect(speechSlots).toBeGreaterThan(200);
    expect(silentSlots).toBeGreaterThan(200);
  });
});

describe('cascade: recording', () => {
  it('writes a stereo WAV with caller left and assistant right on the call clock', async () => {
    const dir = testTempDir('sb-rec-');
    const path = join(dir, 'recordings', 'call-1.wav');
    const { result, media, events } = await runCall({
      config: { record: true },
      deps: { recordingPath: path },
      script: { items: [say('utt-opening-hours', 4000)], hangUpAtMs: 12_000 },
    });
    expect(result.recording?.path).toBe(path);
    const wav = readWav(readFileSync(path));
    expect(wav.channels).toBe(2);
    const left = new Int16Array(wav.samples.length / 2);
    const right = new Int16Array(wav.samples.length / 2);
    for (let i = 0; i < left.length; i++) {
      left[i] = wav.samples[2 * i]!;
      right[i] = wav.samples[2 * i + 1]!;
    }
    // Caller: the fixture's first loud sample lands exactly 4 s in.
    const onset = (pcm: Int16Array, from = 0): number => {
      for (let i = from; i < pcm.length; i++) if (Math.abs(pcm[i]!) > 2000) return i;
      return -1;
    };
    expect(onset(left)).toBe(4000 * 16 + onset(fixture('utt-opening-hours')));
    // Assistant: greeting at 0, reply at the decision — where the caller heard them (±1 frame).
    const heard = media.audibleRuns();
    expect(onset(right) / 16).toBeLessThanOrEqual(heard[0]!.startMs);
    const eot = events('end-of-turn')[0]!;
    const replyOnset = onset(right, (eot.atMs - 100) * 16) / 16;
    expect(Math.abs(replyOnset - heard[1]!.startMs)).toBeLessThanOrEqual(20);
    // Nothing from the assistant while the caller spoke (no echo, separate channels).
    const spoke = right.subarray(4500 * 16, 5900 * 16);
    expect(spoke.every((s) => s === 0)).toBe(true);
  });
});
