/**
 * `switchboard replay --stand-ins`: a fixture through a real session (Silero VAD, denoiser,
 * Flite speech) on a virtual clock, printed as a JSON timeline, faster than real time; with
 * `--tape` a script of more audio and DTMF, or a recorded call tape instead of `--caller`.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { resample } from '../../../src/audio/resample.ts';
import { readWav, toMono } from '../../../src/audio/wav.ts';
import { TapeRecorder } from '../../../src/call/tape.ts';
import { knownTranscript, runReplay, STAND_IN_CALLER_TEXT, STAND_IN_REPLY, toAssistant } from '../../../src/replay/replay.ts';
import { CallerStream, g711Media } from '../../support/call-tape.ts';
import { testTempDir } from '../../support/temp-dir.ts';

const exec = promisify(execFile);

describe('switchboard replay', () => {
  it('prints the timeline of a fixture replayed with stand-ins, faster than real time', async () => {
    const dir = testTempDir('sb-replay-');
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

  it('replays a recorded call tape without --caller: its RTP through the inbound chain, its DTMF, its hang-up', async () => {
    const dir = testTempDir('sb-replay-tape-');
    const assistantFile = join(dir, 'assistant.json');
    writeFileSync(assistantFile, JSON.stringify({ system_prompt: 'You take calls.', initial_message: 'Hello.' }));
    const wav = readWav(readFileSync('fixtures/audio/utt-cancel.wav'));
    const speech = resample(toMono(wav), wav.sampleRate, 8000);
    // A caller behind some jitter: silence, the utterance from 1 s, a key at 5 s, silence to 7 s.
    const stream = new CallerStream(0xabc, 7).audio(0, 50, 0).pcm(1_000, speech);
    const afterSpeechMs = 1_000 + Math.ceil(speech.length / 160) * 20;
    stream.audio(afterSpeechMs, (5_000 - afterSpeechMs) / 20, 0).key(5_000, '3').audio(5_200, 90, 0);
    const origin = 123_456;
    const rec = new TapeRecorder({ call: { uuid: 'recorded', direction: 'inbound' }, originMs: origin });
    rec.media(g711Media(), origin);
    for (const a of stream.sorted()) rec.packet(a.packet, origin + a.atMs);
    rec.hangup('remote-hangup', origin + 7_000);
    const tapeFile = join(dir, 'call.tape.json');
    writeFileSync(tapeFile, JSON.stringify(rec));

    const { stdout } = await exec(process.execPath, ['bin/switchboard.js', 'replay', '--assistant', assistantFile, '--tape', tapeFile, '--stand-ins'], {
      env: { ...process.env, SWITCHBOARD_DATA_DIR: dir },
    });
    const out = JSON.parse(stdout) as {
      caller: string | null;
      tape: { kind: string; call_uuid: string; packets: number };
      call_ms: number;
      ended_by: string;
      timeline: { type: string; atMs: number; taken?: boolean; transcript?: string; digit?: string }[];
    };
    expect(out.caller).toBeNull();
    expect(out.tape).toMatchObject({ kind: 'call-tape', call_uuid: 'recorded', packets: stream.arrivals.length });
    expect(out.ended_by).toBe('caller-hangup');
    expect(out.call_ms).toBe(7_000);
    // The fixture has a 0.5 s lead-in; it starts 1 s into the call, behind the jitter buffer.
    const start = out.timeline.find((e) => e.type === 'vad-speech-start')!;
    expect(start.atMs).toBeGreaterThanOrEqual(1_500);
    expect(start.atMs).toBeLessThan(1_800);
    expect(out.timeline.find((e) => e.type === 'end-of-turn')).toMatchObject({ taken: true, transcript: STAND_IN_CALLER_TEXT });
    const dtmf = out.timeline.filter((e) => e.type === 'dtmf');
    expect(dtmf.map((e) => e.digit)).toEqual(['3']);
    // Reported at the first end packet: the key's last update (5.08 s) plus a millisecond and the jitter.
    expect(dtmf[0]!.atMs).toBeGreaterThanOrEqual(5_081);
    expect(dtmf[0]!.atMs).toBeLessThan(5_100);
  }, 60_000);

  it('still takes a script as --tape: more audio at its time, DTMF, the hang-up', async () => {
    const dir = testTempDir('sb-replay-script-');
    const assistantFile = join(dir, 'assistant.json');
    writeFileSync(assistantFile, JSON.stringify({ system_prompt: 'You take calls.', initial_message: '' }));
    const script = join(dir, 'script.json');
    writeFileSync(script, JSON.stringify({ audio: [{ atMs: 6_000, file: `${process.cwd()}/fixtures/audio/utt-cancel.wav` }], dtmf: [{ atMs: 4_000, digit: '9' }], hangUpAtMs: 12_000 }));
    const out = await runReplay({ assistant: assistantFile, caller: 'fixtures/audio/utt-yes.wav', tape: script, standIns: true });
    expect(out.tape).toEqual({ file: script, kind: 'script' });
    expect(out.call_ms).toBe(12_000);
    const timeline = out.timeline as { type: string; atMs: number; taken?: boolean; transcript?: string; digit?: string }[];
    expect(timeline.filter((e) => e.type === 'dtmf')).toEqual([{ type: 'dtmf', atMs: 4_000, digit: '9' }]);
    const turns = timeline.filter((e) => e.type === 'end-of-turn' && e.taken).map((e) => e.transcript);
    expect(turns).toEqual(['Yes.', 'I need to cancel my appointment on Friday.']);
    expect(timeline.filter((e) => e.type === 'vad-speech-start').some((e) => e.atMs >= 6_000 && e.atMs < 6_800)).toBe(true);
  }, 60_000);

  it('refuses arguments that make no replay, as usage errors', async () => {
    const dir = testTempDir('sb-replay-usage-');
    const assistantFile = join(dir, 'assistant.json');
    writeFileSync(assistantFile, JSON.stringify({ system_prompt: 'x' }));
    const script = join(dir, 'script.json');
    writeFileSync(script, JSON.stringify({ dtmf: [] }));
    const strange = join(dir, 'strange.json');
    writeFileSync(strange, JSON.stringify({ kind: 'something-else' }));
    const run = (args: string[]) =>
      exec(process.execPath, ['bin/switchboard.js', 'replay', '--assistant', assistantFile, ...args], { env: { ...process.env, SWITCHBOARD_DATA_DIR: dir } }).then(
        () => ({ code: 0, stderr: '' }),
        (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
      );
    expect(await run([])).toMatchObject({ code: 2, stderr: expect.stringContaining('--caller is required') });
    expect(await run(['--tape', script])).toMatchObject({ code: 2, stderr: expect.stringContaining('unless --tape is a recorded call tape') });
    expect(await run(['--tape', strange, '--caller', 'fixtures/audio/utt-yes.wav'])).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown kind "something-else"') });
  }, 60_000);
});
