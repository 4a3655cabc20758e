/** The pipeline's call rules (CallRules) drive realtime calls the same way, in both modes. */
import { describe, expect, it } from 'vitest';
import { runRealtimeCall } from './harness.ts';

const GOODBYE = "I'm sorry, we've reached the time limit for this call. Thank you for calling, goodbye.";

describe.each(['multimodal', 'dualplex'] as const)('%s call rules', (mode) => {
  it('re-engages after max_silence_duration, then every reengagement_interval', async () => {
    const run = await runRealtimeCall({
      mode,
      config: { wait_for_customer: true, max_silence_duration: 2, reengagement_interval: 7 },
      script: { items: [], hangUpAtMs: 14_000 },
      standIn: { script: [{ say: 'Are you still there?' }, { say: 'Are you still there?' }] },
    });
    const re = run.events('reengagement');
    expect(re.map((e) => e.atMs)).toHaveLength(2);
    expect(re[0]!.atMs).toBe(2000);
    const firstStop = run.events('assistant-audio-stop')[0]!;
    // The interval counts from the end of the re-engagement's audio (silence, not time since).
    expect(re[1]!.atMs - firstStop.atMs).toBeGreaterThanOrEqual(7000);
    expect(re[1]!.atMs - firstStop.atMs).toBeLessThanOrEqual(7020);
    const spoken = run.result.transcript.filter((e) => e.kind === 'reengagement');
    expect(spoken.map((e) => e.text)).toEqual(['Are you still there?', 'Are you still there?']);
    if (mode === 'multimodal') expect(run.standIn.connections[0]!.responses[0]!.instructions).toContain('"Are you still there?"');
    else expect(run.standIn.connections[0]!.responses).toHaveLength(0);
  });

  it('re-engages with the reengagement_prompt through the model', async () => {
    const run = await runRealtimeCall({
      mode,
      config: { wait_for_customer: true, max_silence_duration: 1, reengagement_prompt: 'Ask whether they want to book at {{restaurant}}.' },
      script: { items: [], hangUpAtMs: 4000 },
      standIn: { script: [{ say: 'Would you like to book a table at Luigi?' }] },
    });
    expect(run.standIn.connections[0]!.responses[0]!.instructions).toContain('Ask whether they want to book at Luigi.');
    expect(run.result.transcript[0]).toMatchObject({ kind: 'reengagement', text: 'Would you like to book a table at Luigi?' });
  });

  it('hangs up after max_initial_silence_duration when the caller never speaks', async () => {
    const run = await runRealtimeCall({
      mode,
      config: { max_initial_silence_duration: 3 },
      script: { items: [] },
      standIn: { script: [{ say: 'Hello, thanks for calling Luigi.' }] },
    });
    expect(run.result.endedBy).toBe('initial-silence');
    expect(run.media.closedCause).toBe('local-hangup');
    expect(run.media.closedAtMs).toBe(3000);
  });

  it('says goodbye at max_duration and hangs up once it has played', async () => {
    const run = await runRealtimeCall({
      mode,
      config: { wait_for_customer: true, max_duration: 20, max_silence_duration: 360 },
      script: { items: [] },
      standIn: { script: [{ say: GOODBYE }] },
    });
    const goodbye = run.result.transcript.find((e) => e.kind === 'goodbye')!;
    expect(goodbye.text).toBe(GOODBYE);
    expect(goodbye.startMs).toBeGreaterThanOrEqual(20_000);
    expect(goodbye.startMs).toBeLessThanOrEqual(20_040);
    expect(run.result.endedBy).toBe('max-duration');
    expect(run.media.closedCause).toBe('max-duration');
    expect(run.media.closedAtMs! - goodbye.endMs).toBeLessThanOrEqual(20);
    if (mode === 'multimodal') expect(run.standIn.connections[0]!.responses[0]!.instructions).toContain('time limit');
  });

  it('says the goodbye in the assistant’s language', async () => {
    const abschied = 'Es tut mir leid, die maximale Dauer dieses Anrufs ist erreicht. Vielen Dank für Ihren Anruf, auf Wiederhören.';
    const run = await runRealtimeCall({
      mode,
      config: { wait_for_customer: true, max_duration: 10, max_silence_duration: 360 },
      script: { items: [] },
      standIn: { script: [{ say: abschied }] },
      deps: { language: 'de-DE' },
    });
    expect(run.result.transcript.find((e) => e.kind === 'goodbye')!.text).toBe(abschied);
    if (mode === 'multimodal') expect(run.standIn.connections[0]!.responses[0]!.instructions).toContain('maximale Dauer');
    expect(run.result.endedBy).toBe('max-duration');
  });

  it('covers a slow tool with a short line instead of dead air or "are you still there?"', async () => {
    const run = await runRealtimeCall({
      mode,
      config: { max_silence_duration: 2, initial_message: '' },
      script: { items: [{ atMs: 300, samples: loud(800) }], hangUpAtMs: 12_000 },
      toolsFor: (clock) => [
        {
          spec: { name: 'lookup', description: 'Slow lookup', parameters: { type: 'object', properties: {} } },
          run: () => new Promise((resolve) => clock.setTimeout(() => resolve({ found: true }), 5000)),
        },
      ],
      standIn: {
        // Multimodal asks the model to say the line; dualplex speaks it with our TTS directly.
        script: [
          { calls: [{ name: 'lookup', arguments: {} }] },
          ...(mode === 'multimodal' ? [{ say: 'One moment please, I am still looking into that.' }] : []),
          { say: 'Found it.' },
        ],
        userTranscripts: ['Can you look that up?'],
      },
    });
    const re = run.events('reengagement');
    expect(re[0]).toMatchObject({ covering: 'tool' });
    const texts = run.result.transcript.filter((e) => e.speaker === 'assistant').map((e) => e.text);
    expect(texts).toEqual(['One moment please, I am still looking into that.', 'Found it.']);
    expect(run.result.transcript.at(-1)!.functionCalls).toEqual([{ name: 'lookup', arguments: {}, result: { found: true } }]);
  });
});

/** A plain loud tone: the stand-in's energy VAD takes it for speech. */
function loud(ms: number): Int16Array {
  const out = new Int16Array((ms * 16_000) / 1000);
  for (let i = 0; i < out.length; i++) out[i] = Math.round(8000 * Math.sin((2 * Math.PI * 300 * i) / 16_000));
  return out;
}
