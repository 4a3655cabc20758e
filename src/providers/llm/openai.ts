import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { ProviderError } from '../../util/errors.ts';
import type { LlmMessage, LlmProvider, LlmRequest, LlmResult, LlmToolCall } from './types.ts';
import { httpFetch } from '../http-fetch.ts';

export interface OpenAiLlmOptions {
  apiKey?: string;
  baseUrl?: string;
  /** Time allowed until the response headers arrive. */
  connectTimeoutMs?: number;
  /** Longest silence between two streamed chunks before the attempt is abandoned. */
  idleTimeoutMs?: number;
  /** Extra attempts after a failure that happened before any token reached the caller. */
  retries?: number;
}

/**
 * Chat completions over the OpenAI protocol, always streamed so voice can speak early. Retries
 * are ours, not the client's: a retry after tokens were already handed to `onToken` would say
 * things twice, so only failures before the first token are retried.
 */
const NO_KEY = 'OpenAI: no API key configured (OPENAI_API_KEY)';

export class OpenAiLlmProvider implements LlmProvider {
  readonly label = 'openai';
  readonly capabilities = { streaming: true, tools: true };
  private readonly client: OpenAI;
  private readonly idleTimeoutMs: number;
  private readonly retries: number;
  /** No key and the official endpoint: every request could only be refused. */
  private readonly keyless: boolean;

  constructor(opts: OpenAiLlmOptions = {}) {
    this.keyless = !opts.apiKey && !opts.baseUrl;
    this.client = new OpenAI({
      // The client refuses to start without a key; a local stand-in or proxy does not need one.
      apiKey: opts.apiKey ?? 'unset',
      baseURL: opts.baseUrl,
      maxRetries: 0,
      fetch: httpFetch,
      timeout: opts.connectTimeoutMs ?? 20_000,
    });
    this.idleTimeoutMs = opts.idleTimeoutMs ?? 30_000;
    this.retries = opts.retries ?? 1;
  }

  async complete(req: LlmRequest): Promise<LlmResult> {
    if (this.keyless) throw new ProviderError(NO_KEY, this.label, false);
    let lastError: unknown;
    for (let attempt = 0; attempt <= this.retries; attempt++) {
      const state = { emitted: false };
      try {
        return await this.attempt(req, state);
      } catch (err) {
        if (req.signal?.aborted) throw err;
        lastError = err;
        const retryable = !(err instanceof OpenAI.APIError) || err.status === undefined || err.status >= 500 || err.status === 429;
        // Without a token listener nothing was shown to anyone, so a broken stream can be redone.
        if ((state.emitted && req.onToken) || !retryable) break;
      }
    }
    throw toProviderError(lastError, this.label);
  }

  private async attempt(req: LlmRequest, state: { emitted: boolean }): Promise<LlmResult> {
    const idle = new AbortController();
    const signal = req.signal ? AbortSignal.any([req.signal, idle.signal]) : idle.signal;
    // One timer for the whole attempt, restarted (refresh: no new timer) by every chunk.
    const timer = setTimeout(() => idle.abort(new Error(`no data from the model for ${this.idleTimeoutMs} ms`)), this.idleTimeoutMs);
    const arm = (): void => void timer.refresh();
    try {
      const stream = await this.client.chat.completions.create(
        {
          model: req.model,
          messages: req.messages.map(toOpenAiMessage),
          ...(req.tools && req.tools.length > 0 ? { tools: req.tools.map(toOpenAiTool) } : {}),
          ...(req.temperature === undefined ? {} : { temperature: req.temperature }),
          stream: true,
        },
        { signal },
      );
      let content = '';
      let finishReason: string | null = null;
      const calls: { id: string; name: string; arguments: string }[] = [];
      for await (const chunk of stream) {
        arm();
        const choice = chunk.choices[0];
        if (!choice) continue;
        const delta = choice.delta;
        if (delta?.content) {
          content += delta.content;
          state.emitted = true;
          req.onToken?.(delta.content);
        }
        for (const tc of delta?.tool_calls ?? []) {
          const slot = (calls[tc.index] ??= { id: '', name: '', arguments: '' });
          if (tc.id) slot.id = tc.id;
          if (tc.function?.name) slot.name += tc.function.name;
          if (tc.function?.arguments) slot.arguments += tc.function.arguments;
        }
        if (choice.finish_reason) finishReason = choice.finish_reason;
      }
      if (idle.signal.aborted) throw idle.signal.reason;
      const toolCalls: LlmToolCall[] = calls
        .filter((c) => c && c.name)
        .map((c, i) => ({ id: c.id || `call_${i}`, name: c.name, arguments: c.arguments }));
      return { content, toolCalls, finishReason };
    } catch (err) {
      // An idle abort surfaces as a generic abort error; report why instead.
      if (idle.signal.aborted && !req.signal?.aborted) throw idle.signal.reason;
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }
}

function toProviderError(err: unknown, label: string): ProviderError {
  if (err instanceof ProviderError) return err;
  let message = err instanceof Error ? err.message : String(err);
  if (err instanceof OpenAI.APIError && err.status) message = `model provider answered ${err.status}: ${message}`;
  // A refusal (401, 403, 400) stays one however often it is asked again.
  const status = err instanceof OpenAI.APIError ? err.status : undefined;
  const e = new ProviderError(message, label, status === undefined || status >= 500 || status === 429);
  // Kept so the chat side can say what failed (status, refused connection) without parsing text.
  (e as { cause?: unknown }).cause = err;
  return e;
}

function toOpenAiMessage(m: LlmMessage): ChatCompletionMessageParam {
  switch (m.role) {
    case 'system':
    case 'user':
      return { role: m.role, content: m.content };
    case 'tool':
      return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: m.content,
        ...(m.toolCalls && m.toolCalls.length > 0
          ? {
              tool_calls: m.toolCalls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.name, arguments: c.arguments },
              })),
            }
          : {}),
      };
  }
}

function toOpenAiTool(t: { name: string; description: string; parameters: Record<string, unknown> }): ChatCompletionTool {
  return { type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } };
}
