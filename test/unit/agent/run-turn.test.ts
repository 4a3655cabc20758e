import { describe, expect, it } from 'vitest';
import { Agent, MAX_ROUNDS } from '../../../src/agent/run-turn.ts';
import type { AgentDeps, AgentAssistant, CustomToolDef } from '../../../src/agent/types.ts';
import type { LlmProvider, LlmRequest, LlmResult } from '../../../src/providers/llm/types.ts';
import { ProviderError } from '../../../src/util/errors.ts';

class FakeLlm implements LlmProvider {
  readonly label = 'fake';
  readonly capabilities = { streaming: true, tools: true };
  readonly requests: LlmRequest[] = [];
  constructor(private readonly script: (req: LlmRequest, n: number) => LlmResult) {}
  async complete(req: LlmRequest): Promise<LlmResult> {
    this.requests.push(req);
    const res = this.script(req, this.requests.length);
    for (const ch of res.content) req.onToken?.(ch);
    return res;
  }
}

const answer = (content: string): LlmResult => ({ content, toolCalls: [], finishReason: 'stop' });
const call = (name: string, args: unknown, id = 'c1'): LlmResult => ({ content: '', toolCalls: [{ id, name, arguments: JSON.stringify(args) }], finishReason: 'tool_calls' });

function deps(models: Record<number, LlmProvider>, tools: CustomToolDef[] = [], fetchImpl?: typeof fetch): AgentDeps {
  return {
    resolveModel: (id) => (id != null && models[id] ? { provider: models[id]!, model: `m${id}` } : undefined),
    customTools: async () => tools,
    searchKnowledge: async () => [],
    fetch: fetchImpl,
  };
}

const assistant = (config: AgentAssistant['config'] = {}): AgentAssistant => ({ id: 1, accountId: 1, mode: 'pipeline', config: { llm_model_id: 1, system_prompt: 'Hi', ...config } });

describe('Agent.runTurn', () => {
  it('streams tokens and returns the reply', async () => {
    const llm = new FakeLlm(() => answer('Hello'));
    const tokens: string[] = [];
    const res = await new Agent(deps({ 1: llm })).runTurn({ assistant: assistant(), history: [{ role: 'user', content: 'hi' }], onToken: (t) => tokens.push(t) });
    expect(res).toEqual({ reply: 'Hello', functionCalls: [], ended: false });
    expect(tokens.join('')).toBe('Hello');
    expect(llm.requests[0]!.temperature).toBe(0.1);
  });

  it('caps tool rounds: the last round offers no tools', async () => {
    const llm = new FakeLlm((req, n) => (req.tools ? call('lookup', { q: n }, `c${n}`) : answer('done')));
    const tool: CustomToolDef = { id: 1, name: 'lookup', description: 'd', parameters: { type: 'object' }, endpoint: 'http://x.test/', method: 'POST', headers: {}, timeout_ms: 1000 };
    const fakeFetch = (async () => new Response('{"ok":1}', { status: 200 })) as typeof fetch;
    const res = await new Agent(deps({ 1: llm }, [tool], fakeFetch)).runTurn({ assistant: assistant({ tool_ids: [1] }), history: [{ role: 'user', content: 'go' }] });
    expect(llm.requests).toHaveLength(MAX_ROUNDS);
    expect(llm.requests.at(-1)!.tools).toBeUndefined();
    expect(res.functionCalls).toHaveLength(MAX_ROUNDS - 1);
    expect(res.reply).toBe('done');
  });

  it('a tool that does not answer in time gives the model an error result', async () => {
    const llm = new FakeLlm((req) => (req.messages.some((m) => m.role === 'tool') ? answer('sorry') : call('slow', {})));
    const tool: CustomToolDef = { id: 1, name: 'slow', description: 'd', parameters: {}, endpoint: 'http://x.test/', method: 'GET', headers: {}, timeout_ms: 50 };
    const hang = ((_url: string, init: RequestInit) =>
      new Promise((_, reject) => init.signal!.addEventListener('abort', () => reject(new Error('aborted'))))) as unknown as typeof fetch;
    const res = await new Agent(deps({ 1: llm }, [tool], hang)).runTurn({ assistant: assistant({ tool_ids: [1] }), history: [{ role: 'user', content: 'x' }] });
    expect(res.functionCalls[0]!.result).toEqual({ error: 'The tool did not answer within 50 ms.' });
    expect(res.reply).toBe('sorry');
  });

  it('unknown functions are reported to the model, not thrown', async () => {
    const llm = new FakeLlm((_r, n) => (n === 1 ? call('nope', {}) : answer('ok')));
    const tool: CustomToolDef = { id: 1, name: 'real', description: 'd', parameters: {}, endpoint: 'http://x.test/', method: 'POST', headers: {}, timeout_ms: 50 };
    const res = await new Agent(deps({ 1: llm }, [tool])).runTurn({ assistant: assistant({ tool_ids: [1] }), history: [{ role: 'user', content: 'x' }] });
    expect(res.functionCalls).toEqual([{ name: 'nope', arguments: {}, result: { error: 'Unknown function nope.' } }]);
  });

  it('uses chat_llm_fallback_id when the primary fails, and fails when both do', async () => {
    const broken = new FakeLlm(() => {
      throw new ProviderError('down', 'fake');
    });
    const backup = new FakeLlm(() => answer('from backup'));
    const agent = new Agent(deps({ 1: broken, 2: backup }));
    const res = await agent.runTurn({ assistant: assistant({ chat_llm_fallback_id: 2 }), history: [{ role: 'user', content: 'x' }] });
    expect(res.reply).toBe('from backup');
    await expect(agent.runTurn({ assistant: assistant(), history: [{ role: 'user', content: 'x' }] })).rejects.toThrow('down');
  });

  it('realtime assistants without llm_model_id use the fallback model', async () => {
    const backup = new FakeLlm(() => answer('ok'));
    const res = await new Agent(deps({ 2: backup })).runTurn({
      assistant: assistant({ llm_model_id: null, chat_llm_fallback_id: 2 }),
      history: [{ role: 'user', content: 'x' }],
    });
    expect(res.reply).toBe('ok');
    expect(backup.requests[0]!.model).toBe('m2');
  });

  it('fills {{variables}} from the assistant, then the conversation or call (which win); language; temperature', async () => {
    const llm = new FakeLlm(() => answer('ok'));
    const d = { ...deps({ 1: llm }), languageName: (id: number) => ({ 1: 'English (en-US)', 2: 'German (de-DE)' })[id] };
    await new Agent(d).runTurn({
      assistant: assistant({
        system_prompt: 'Agent of {{company}} for {{customer_name}}, tone {{tone}}, ref {{missing}}.',
        variables: { company: 'Acme', tone: 'calm', customer_name: 'nobody' },
        language_id: 1,
        secondary_language_ids: [2],
        llm_temperature: 0.65,
      }),
      history: [{ role: 'user', content: 'hi' }],
      variables: { customer_name: 'Ana', tone: 'warm' },
      channel: 'voice',
    });
    const req = llm.requests[0]!;
    const system = req.messages[0]!;
    expect(system.role).toBe('system');
    expect(system.content).toContain('Agent of Acme for Ana, tone warm, ref {{missing}}.');
    expect(system.content).toContain('Respond in English (en-US). If the customer uses German (de-DE), answer in that language instead.');
    expect(req.temperature).toBe(0.65);
    expect(req.model).toBe('m1');
  });

  it('knowledge base: prompt mode puts passages for the last customer message in the prompt; function_call mode offers search', async () => {
    const searches: string[] = [];
    const kbDeps = (llm: LlmProvider): AgentDeps => ({
      ...deps({ 1: llm }),
      searchKnowledge: async (_acct, _kb, query) => {
        searches.push(query);
        return [{ title: 'Hours', content: 'Open 9 to 5.' }];
      },
    });
    const promptLlm = new FakeLlm(() => answer('9 to 5'));
    await new Agent(kbDeps(promptLlm)).runTurn({
      assistant: assistant({ knowledgebase_id: 3, knowledgebase_mode: 'prompt' }),
      history: [{ role: 'user', content: 'old question' }, { role: 'assistant', content: 'a' }, { role: 'user', content: 'when are you open?' }],
    });
    expect(searches).toEqual(['when are you open?']);
    expect(promptLlm.requests[0]!.messages[0]!.content).toContain('[1] Hours\nOpen 9 to 5.');
    expect(promptLlm.requests[0]!.tools).toBeUndefined();

    const fnLlm = new FakeLlm((req) => (req.messages.some((m) => m.role === 'tool') ? answer('9 to 5') : call('search_knowledge_base', { query: 'opening hours' })));
    const res = await new Agent(kbDeps(fnLlm)).runTurn({
      assistant: assistant({ knowledgebase_id: 3, knowledgebase_mode: 'function_call' }),
      history: [{ role: 'user', content: 'when are you open?' }],
    });
    expect(fnLlm.requests[0]!.tools?.map((t) => t.name)).toEqual(['search_knowledge_base']);
    expect(fnLlm.requests[0]!.messages[0]!.content).not.toContain('Open 9 to 5.');
    expect(searches.at(-1)).toBe('opening hours');
    expect(res.functionCalls).toEqual([
      { name: 'search_knowledge_base', arguments: { query: 'opening hours' }, result: { passages: [{ title: 'Hours', content: 'Open 9 to 5.' }] } },
    ]);
  });
});
