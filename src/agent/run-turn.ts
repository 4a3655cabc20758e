import type { LlmMessage, LlmRequest, LlmResult, LlmToolCall } from '../providers/llm/types.ts';
import { ProviderError } from '../util/errors.ts';
import { traceTool } from '../telemetry/tools.ts';
import { isObject } from './json-schema.ts';
import { buildSystemPrompt } from './prompt.ts';
import { mergeVariables } from './template.ts';
import { buildTools, kbMode } from './tools.ts';
import type { AgentDeps, AgentTool, FunctionCallRecord, KbPassage, ResolvedModel, TurnInput, TurnResult } from './types.ts';

/** Model rounds per turn; the last one offers no tools so the model has to answer in words. */
export const MAX_ROUNDS = 6;
const PROMPT_PASSAGES = 3;
const DEFAULT_TEMPERATURE = 0.1;

/**
 * The conversation brain shared by chats and calls: one customer turn in, one answer out, with as
 * many tool rounds in between as the model needs (capped). It holds no state of its own: the
 * caller owns the history and stores what comes back.
 */
export class Agent {
  constructor(private readonly deps: AgentDeps) {}

  async runTurn(input: TurnInput): Promise<TurnResult> {
    const { assistant, signal } = input;
    const channel = input.channel ?? 'text';
    const cfg = assistant.config;
    const variables = mergeVariables(cfg.variables, input.variables);
    const tools = await buildTools(assistant, this.deps, channel, input.extraTools);

    let passages: KbPassage[] | undefined;
    const lastUser = [...input.history].reverse().find((m) => m.role === 'user');
    if (kbMode(assistant) === 'prompt' && cfg.knowledgebase_id != null && lastUser) {
      passages = await this.deps.searchKnowledge(assistant.accountId, cfg.knowledgebase_id, lastUser.content, PROMPT_PASSAGES);
    }
    const system = buildSystemPrompt({
      config: cfg,
      variables,
      channel,
      languageName: this.deps.languageName,
      passages,
      searchOffered: [...tools.keys()].includes('search_knowledge_base'),
    });
    const messages: LlmMessage[] = [{ role: 'system', content: system }];
    for (const m of input.history) messages.push({ role: m.role, content: m.content });

    const models = this.models(cfg.llm_model_id, cfg.chat_llm_fallback_id);
    const functionCalls: FunctionCallRecord[] = [];
    const said: string[] = [];
    let ended = false;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const offer = round < MAX_ROUNDS - 1 && tools.size > 0 && !ended;
      const result = await this.complete(models, {
        model: '',
        messages,
        tools: offer ? [...tools.values()].map((t) => t.spec) : undefined,
        temperature: cfg.llm_temperature ?? DEFAULT_TEMPERATURE,
        signal,
        onToken: input.onToken,
      });
      if (result.content.trim()) said.push(result.content.trim());
      if (!offer || result.toolCalls.length === 0) break;
      messages.push({ role: 'assistant', content: result.content || null, toolCalls: result.toolCalls });
      for (const call of result.toolCalls) {
        const record = await runCall(tools.get(call.name), call, signal);
        functionCalls.push(record);
        if (tools.get(call.name)?.ends && !('error' in record.result)) ended = true;
        messages.push({ role: 'tool', toolCallId: call.id, content: JSON.stringify(record.result) });
      }
    }
    return { reply: said.join('\n\n'), functionCalls, ended };
  }

  /** Primary model, then the assistant's fallback: `llm_model_id` is absent on realtime assistants. */
  private models(primaryId: number | null | undefined, fallbackId: number | null | undefined): ResolvedModel[] {
    const out: ResolvedModel[] = [];
    const primary = this.deps.resolveModel(primaryId ?? fallbackId);
    if (primary) out.push(primary);
    if (fallbackId != null && primaryId != null && fallbackId !== primaryId) {
      const fb = this.deps.resolveModel(fallbackId);
      if (fb) out.push(fb);
    }
    if (out.length === 0) throw new ProviderError('No language model is configured for this assistant.', 'agent', false);
    return out;
  }

  private async complete(models: ResolvedModel[], req: LlmRequest): Promise<LlmResult> {
    let lastError: unknown;
    for (const m of models) {
      try {
        return await m.provider.complete({ ...req, model: m.model });
      } catch (err) {
        if (req.signal?.aborted) throw err;
        lastError = err;
      }
    }
    throw lastError instanceof ProviderError ? lastError : new ProviderError(String((lastError as Error)?.message ?? lastError), 'llm');
  }
}

async function runCall(tool: AgentTool | undefined, call: LlmToolCall, signal: AbortSignal | undefined): Promise<FunctionCallRecord> {
  let args: Record<string, unknown> = {};
  let parseError: string | undefined;
  try {
    const parsed: unknown = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
    if (isObject(parsed)) args = parsed;
    else parseError = 'Invalid arguments: expected a JSON object';
  } catch {
    parseError = 'Invalid arguments: not valid JSON';
  }
  if (!tool) return { name: call.name, arguments: args, result: { error: `Unknown function ${call.name}.` } };
  if (parseError) return { name: call.name, arguments: args, result: { error: parseError } };
  try {
    return { name: call.name, arguments: args, result: await traceTool(call.name, () => tool.run(args, signal)) };
  } catch (err) {
    if (signal?.aborted) throw err;
    return { name: call.name, arguments: args, result: { error: `The function failed: ${(err as Error).message}` } };
  }
}
