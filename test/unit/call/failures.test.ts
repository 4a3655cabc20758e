import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { endCauseOf, failureOf, failureReason, isPermanent } from '../../../src/call/failures.ts';
import { toProviderError } from '../../../src/providers/resilience.ts';
import { ProviderError } from '../../../src/util/errors.ts';

/** What undici throws for a refused connection: `fetch failed` with the socket error as its cause. */
function refused(): Error {
  const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
  return Object.assign(new TypeError('fetch failed'), { cause });
}

describe('failure reasons', () => {
  it.each([
    ['a Deepgram handshake refusal', new ProviderError('Deepgram refused the connection: HTTP 401', 'deepgram', false), '401'],
    ['a realtime handshake refusal', new ProviderError('openai-realtime refused the connection (HTTP 403)', 'openai-realtime', false), '403'],
    ['an OpenAI SDK status error', toProviderError(OpenAI.APIError.generate(500, { error: { message: 'boom' } }, 'boom', new Headers()), 'openai', 'speech'), '500'],
    ['a refused TCP connection (undici)', toProviderError(refused(), 'openai', 'speech'), 'connection refused'],
    ['a socket closed during connect', new ProviderError('openai-realtime closed during connect (1011 server error)', 'openai-realtime', true), '1011'],
    ['our own deadline', new Error('no audio in time'), 'timeout'],
    ['a provider with no key in this engine', new ProviderError('Deepgram: no API key configured (DEEPGRAM_API_KEY)', 'deepgram', false), 'no API key'],
    ['anything else', new Error('something odd'), 'error'],
  ])('%s → %s', (_what, err, reason) => {
    expect(failureReason(err)).toBe(reason);
  });

  it('never carries the message (vendors echo parts of the key in it)', () => {
    const err = new ProviderError('Incorrect API key provided: sk-abc***xyz', 'openai', false);
    const f = failureOf('llm-error', err, 'llm');
    expect(endCauseOf(f)).toBe('llm-error: openai error');
    expect(JSON.stringify(f)).not.toContain('sk-abc');
  });

  it('names the provider from the error, else the label given', () => {
    expect(failureOf('stt-unavailable', new ProviderError('Deepgram refused the connection: HTTP 401', 'deepgram', false), 'x')).toEqual({
      kind: 'stt-unavailable',
      provider: 'deepgram',
      reason: '401',
    });
    expect(failureOf('llm-error', new ProviderError('no model', 'llm'), 'llm').provider).toBe('llm');
    expect(failureOf('tts-error', new Error('no audio in time'), 'openai')).toEqual({ kind: 'tts-error', provider: 'openai', reason: 'timeout' });
  });

  it('a refusal is permanent, a server error or a dropped connection is not', () => {
    expect(isPermanent(new ProviderError('HTTP 401', 'deepgram', false))).toBe(true);
    expect(isPermanent(new ProviderError('HTTP 503', 'deepgram', true))).toBe(false);
    expect(isPermanent(OpenAI.APIError.generate(403, { error: { message: 'no' } }, 'no', new Headers()))).toBe(true);
    expect(isPermanent(refused())).toBe(false);
  });
});

describe('OpenAI providers with no key and the official endpoint', () => {
  it('refuse at once, naming OPENAI_API_KEY, as a permanent failure read as "no API key"', async () => {
    const { OpenAiLlmProvider } = await import('../../../src/providers/llm/openai.ts');
    const { OpenAiTts } = await import('../../../src/providers/tts/openai-tts.ts');
    const llm = new OpenAiLlmProvider({});
    const llmErr = await llm.complete({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } as never).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(llmErr).toBeInstanceOf(ProviderError);
    expect((llmErr as ProviderError).message).toContain('OPENAI_API_KEY');
    expect(isPermanent(llmErr)).toBe(true);
    expect(failureReason(llmErr)).toBe('no API key');

    const tts = new OpenAiTts({});
    const ttsErr = await (async () => {
      for await (const _ of tts.synthesize('hello', { voice: 'alloy', signal: new AbortController().signal } as never)) void _;
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(ttsErr).toBeInstanceOf(ProviderError);
    expect(failureReason(ttsErr)).toBe('no API key');
  });
});
