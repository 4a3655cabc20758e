/**
 * Provider failures: one retry, then a spoken apology (the offline voice when TTS itself broke)
 * or a graceful end — never silence.
 */
import { describe, expect, it } from 'vitest';
import { spokenLine } from '../../../src/call/spoken-lines.ts';
import { ToneTtsProvider } from '../../../src/replay/stand-ins.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { runCall, say } from './harness.ts';

const DEFAULT_APOLOGY = spokenLine('apology', 'en-US');

const script = { items: [say('utt-opening-hours', 4000)], hangUpAtMs: 25_000 };

describe('cascade: provider errors', () => {
  it('retries a failed LLM call once and answers', async () => {
    const { events, result } = await runCall({ llm: (l) => l.queue.push({ error: 'HTTP 503' }, { content: 'We open at nine.' }), script });
    expect(events('provider-error')).toEqual([expect.objectContaining({ provider: 'llm', retrying: true })]);
    expect(result.transcript.find((e) => e.kind === 'reply')!.text).toBe('We open at nine.');
  });

  it('retries after no first token within the deadline', async () => {
    const { events, result } = await runCall({
      llm: (l) => l.queue.push({ content: 'Too late.', delayMs: 60_000 }, { content: 'We open at nine.' }),
      deps: { timeouts: { llmFirstTokenMs: 3000 } },
      script,
    });
    const eot = events('end-of-turn')[0]!;
    expect(events('provider-error')).toEqual([expect.objectContaining({ provider: 'llm', retrying: true, atMs: eot.atMs + 3000 })]);
    expect(result.transcript.find((e) => e.kind === 'reply')!.text).toBe('We open at nine.');
  });

  it('apologises when the LLM fails twice, and the call goes on', async () => {
    const { events, tts, result } = await runCall({ llm: (l) => l.queue.push({ error: 'down' }, { error: 'down' }), script });
    expect(events('provider-error').map((e) => e.retrying)).toEqual([true, false]);
    expect(tts.spoken.join(' ')).toContain(DEFAULT_APOLOGY);
    expect(result.transcript.some((e) => e.kind === 'apology')).toBe(true);
    expect(result.endedBy).toBe('caller-hangup');
  });

  it('apologises in the assistant’s language, but in English in the offline voice', async () => {
    const llmDown = await runCall({ llm: (l) => l.queue.push({ error: 'down' }, { error: 'down' }), script, deps: { language: 'es-ES' } });
    expect(llmDown.tts.spoken.join(' ')).toContain('Lo siento, estoy teniendo algunos problemas.');
    const fallback = new ToneTtsProvider(new ManualClock());
    await runCall({
      config: { wait_for_customer: true },
      tts: { failures: 2 },
      deps: { language: 'es-ES', fallbackVoice: { provider: fallback, voice: 'slt' } },
      script,
    });
    expect(fallback.spoken.join(' ')).toBe(DEFAULT_APOLOGY);
  });

  it('apologises in the fallback voice when TTS fails twice', async () => {
    const fallback = new ToneTtsProvider(new ManualClock());
    const { events, tts } = await runCall({
      config: { wait_for_customer: true },
      tts: { failures: 2 },
      deps: { fallbackVoice: { provider: fallback, voice: 'slt' } },
      script,
    });
    expect(events('provider-error').map((e) => [e.provider, e.retrying])).toEqual([
      ['tts', true],
      ['tts', false],
    ]);
    expect(tts.spoken).toEqual([]);
    expect(fallback.spoken.join(' ')).toBe(DEFAULT_APOLOGY);
    expect(events('assistant-audio-start').map((e) => e.kind)).toEqual(['apology']);
  });

  it('ends the call gracefully when TTS fails and there is no fallback voice', async () => {
    const { media, result } = await runCall({ config: { wait_for_customer: true }, tts: { failures: 2 }, script });
    expect(result.endedBy).toBe('provider-failure');
    expect(media.closedCause).toBe('error');
  });
});
