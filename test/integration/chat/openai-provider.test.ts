import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OpenAiStandIn } from '../../support/openai-stand-in.ts';
import { OpenAiLlmProvider } from '../../../src/providers/llm/openai.ts';
import { ProviderError } from '../../../src/util/errors.ts';

let s: OpenAiStandIn;
let p: OpenAiLlmProvider;
beforeEach(async () => {
  s = await OpenAiStandIn.start();
  p = new OpenAiLlmProvider({ apiKey: 'sk-x', baseUrl: s.baseUrl, idleTimeoutMs: 2_000 });
});
afterEach(() => s.close());

const user = [{ role: 'user' as const, content: 'hi' }];

describe('OpenAiLlmProvider over the stand-in', () => {
  it('streams content deltas and assembles tool calls', async () => {
    s.enqueue({ content: 'Let me check that.', toolCalls: [{ name: 'lookup', arguments: { id: 'A-1', n: 2 } }, { name: 'other', arguments: {} }] });
    const tokens: string[] = [];
    const res = await p.complete({ model: 'gpt-x', messages: user, tools: [{ name: 'lookup', description: 'd', parameters: { type: 'object' } }], temperature: 0.3, onToken: (t) => tokens.push(t) });
    expect(tokens.length).toBeGreaterThan(1);
    expect(tokens.join('')).toBe('Let me check that.');
    expect(res.toolCalls).toEqual([
      { id: expect.any(String), name: 'lookup', arguments: '{"id":"A-1","n":2}' },
      { id: expect.any(String), name: 'other', arguments: '{}' },
    ]);
    expect(res.finishReason).toBe('tool_calls');
    expect(s.requests[0]).toMatchObject({ model: 'gpt-x', stream: true, temperature: 0.3, authorization: 'Bearer sk-x' });
    expect(s.requests[0]!.tools).toEqual([{ type: 'function', function: { name: 'lookup', description: 'd', parameters: { type: 'object' } } }]);
  });

  it('retries once on a server error, then reports a ProviderError', async () => {
    s.enqueue({ status: 500 }, { content: 'second time lucky' });
    expect((await p.complete({ model: 'm', messages: user })).content).toBe('second time lucky');
    s.enqueue({ status: 500 }, { status: 502 });
    await expect(p.complete({ model: 'm', messages: user })).rejects.toBeInstanceOf(ProviderError);
    expect(s.requests).toHaveLength(4);
  });

  it('does not retry a client error', async () => {
    s.enqueue({ status: 400 });
    await expect(p.complete({ model: 'm', messages: user })).rejects.toThrow(/400/);
    expect(s.requests).toHaveLength(1);
  });

  it('does not retry after tokens reached a listener (a voice would repeat itself)', async () => {
    s.enqueue({ content: 'abcdefghijklmnop', failAfterChunks: 2 });
    const tokens: string[] = [];
    await expect(p.complete({ model: 'm', messages: user, onToken: (t) => tokens.push(t) })).rejects.toBeInstanceOf(ProviderError);
    expect(tokens.join('')).toBe('abcdef');
    expect(s.requests).toHaveLength(1);
  });

  it('stops when the caller aborts', async () => {
    s.enqueue({ content: 'slow', delayMs: 500 });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    await expect(p.complete({ model: 'm', messages: user, signal: ac.signal })).rejects.toThrow();
    expect(s.requests).toHaveLength(1);
  });

  it('a stream that goes silent is abandoned after the idle timeout, retried once, then fails', async () => {
    const q = new OpenAiLlmProvider({ apiKey: 'sk-x', baseUrl: s.baseUrl, idleTimeoutMs: 150 });
    s.enqueue({ content: 'abcdefghijkl', stallAfterChunks: 2 }, { content: 'fine now' });
    const started = Date.now();
    expect((await q.complete({ model: 'm', messages: user })).content).toBe('fine now');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(s.requests).toHaveLength(2);
    s.enqueue({ content: 'abc', stallAfterChunks: 1 }, { content: 'abc', stallAfterChunks: 1 });
    await expect(q.complete({ model: 'm', messages: user })).rejects.toThrow(/no data from the model for 150 ms/);
    expect(s.requests).toHaveLength(4);
  });

  it('a server that does not answer in time is abandoned (connect timeout), retried once', async () => {
    const q = new OpenAiLlmProvider({ apiKey: 'sk-x', baseUrl: s.baseUrl, connectTimeoutMs: 100, idleTimeoutMs: 5_000 });
    s.enqueue({ content: 'late', delayMs: 400 }, { content: 'late again', delayMs: 400 });
    // Had either attempt waited for the answer, it would have succeeded.
    await expect(q.complete({ model: 'm', messages: user })).rejects.toSatisfy((e) => e instanceof ProviderError && /timed out/i.test(e.message));
    expect(s.requests).toHaveLength(2);
  });
});
