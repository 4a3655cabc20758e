/**
 * `switchboard replay --stand-ins`: a fixture through a real session (Silero VAD, RNNoise,
 * Flite speech) on a virtual clock, printed as a JSON timeline, faster than real time.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { knownTranscript, STAND_IN_REPLY, toAssistant } from '../../../src/replay/replay.ts';

const exec = promisify(execFile);

describe('switchboard replay', () => {
  it('prints the timeline of a fixture replayed with stand-ins, faster than real time', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-replay-'));
    const assistantFile = join(dir, 'assistant.json');
    writeFileSync(
      assistantFile,
      JSON.stringify({ name: 'Luigi', system_prompt: 'You take calls.', initial_message: 'Hello, Luigi here.', enable_noise_cancellation: true }),
    );
    const { stdout } = await exec(
      process.execPath,
      ['bin/switchboard.js', 'replay', '--assistant', assistantFile, '--caller', 'fixtures/audio/utt-cancel.wav', '--stand-ins'],
      { env: { ...process.env, SWITCHBOARD_DATA_DIR: dir } },
    );
    const out = JSON.parse(stdout) as {
      call_ms: number;
      wall_ms: number;
      timeline: { type: string; atMs: number; taken?: boolean; transcript?: string; kind?: string }[];
      transcript: { speaker: string; text: string }[];
    };
    const types = out.timeline.map((e) => e.type);
    for (const t of ['answer', 'vad-speech-start', 'vad-speech-end', 'end-of-turn', 'assistant-audio-start', 'assistant-audio-stop']) {
      expect(types).toContain(t);
    }
    // The caller starts after the fixture's 0.5 s lead-in; the decision follows the speech end.
    const start = out.timeline.find((e) => e.type === 'vad-speech-start')!;
    expect(start.atMs).toBeGreaterThanOrEqual(500);
    expect(start.atMs).toBeLessThan(700);
    const eot = out.timeline.find((e) => e.type === 'end-of-turn')!;
    expect(eot).toMatchObject({ taken: true, transcript: 'I need to cancel my appointment on Friday.' });
    const times = out.timeline.map((e) => e.atMs);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(out.transcript.at(-1)).toMatchObject({ speaker: 'assistant', text: STAND_IN_REPLY });
    expect(out.call_ms).toBeGreaterThan(out.wall_ms);
  }, 60_000);

  it('reads transcripts from the fixture README and accepts records or bare configs', async () => {
    expect(await knownTranscript('fixtures/audio/utt-yes.wav')).toBe('Yes.');
    expect(await knownTranscript('fixtures/audio/noise-babble.wav')).toBe('');
    expect(await knownTranscript('fixtures/audio/utt-phone-number.wav')).toBe('My number is 0 7 7 0 0, 9 0 0, 1 2 3.');
    expect(await knownTranscript('/nowhere/x.wav')).toBeUndefined();
    expect(toAssistant({ config: { system_prompt: 'x', mode: 'pipeline' }, id: 3 })).toMatchObject({ id: 3, mode: 'pipeline' });
    expect(toAssistant({ system_prompt: 'x' }).config.system_prompt).toBe('x');
  });
});
