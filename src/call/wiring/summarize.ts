/**
 * The supervisor briefing of warm_call_transfer (src/call/control/warm-transfer.ts): an LLM
 * writes 2–3 plain sentences per the tool's `summary_instructions` from what was heard on the
 * call so far and the model's reason. The model is the assistant's own chat model, resolved as
 * for the post-call evaluation (`evaluationModel`). Failures (no model, timeout, provider error,
 * empty answer) throw: the conductor then falls back to the model's own summary.
 */
import type { ResolvedModel, TurnInput, TurnMessage, TurnResult } from '../../agent/types.ts';
import type { AssistantRecord } from '../../store/repos/assistants.ts';
import type { ConductorDeps } from '../control/conductor.ts';
import { DEFAULT_TEXTS } from '../../assistants/tools.ts';
import { evaluationModel } from '../post-call/evaluation.ts';

export const SUMMARY_LLM_TIMEOUT_MS = 8_000;
/** The transcript handed to the summariser is cut to its last this-many characters. */
const MAX_TRANSCRIPT_CHARS = 12_000;

export type Summarize = NonNullable<ConductorDeps['summarize']>;

export interface SummarizerDeps {
  resolveModel(id: number | null | undefined): ResolvedModel | undefined;
  logger?: { warn(obj: object, msg: string): void };
  timeoutMs?: number;
}

export const SUMMARY_SYSTEM_PROMPT = [
  'You brief a human supervisor who is about to take over a phone call from an AI assistant.',
  'Write 2-3 short, plain spoken sentences: no lists, no markdown, no greeting, no sign-off.',
  'Use only facts from the call; never invent names or details.',
].join(' ');

/** Plain text: markdown and line breaks stripped, whitespace collapsed. */
function plain(text: string): string {
  return text
    .replace(/[*_`#>]+/g, '')
    .replace(/^\s*[-•]\s+/gm, '')
    .replace(/\s+/g, ' ')
    .trim();
}

export function historyText(history: readonly TurnMessage[]): string {
  const text = history
    .filter((m) => m.content.trim() !== '')
    .map((m) => `${m.role === 'assistant' ? 'Assistant' : 'Caller'}: ${m.content.trim()}`)
    .join('\n');
  return text.length > MAX_TRANSCRIPT_CHARS ? text.slice(-MAX_TRANSCRIPT_CHARS) : text;
}

/**
 * The conductor's `summarize`, bound to the call's transcript so far (`transcript()` is read when
 * the briefing is written).
 */
export function llmSummarizer(deps: SummarizerDeps, transcript: () => string): Summarize {
  return async (assistant: AssistantRecord, instructions: string, context: string, signal: AbortSignal): Promise<string> => {
    const model = evaluationModel(deps, assistant);
    if (!model) throw new Error('no language model is available for the briefing');
    const heard = transcript().trim();
    try {
      const result = await model.provider.complete({
        model: model.model,
        temperature: 0.2,
        messages: [
          { role: 'system', content: `${SUMMARY_SYSTEM_PROMPT}\n\nInstructions: ${instructions.trim() || DEFAULT_TEXTS.summary_instructions}` },
          { role: 'user', content: `${context}\n\nTranscript so far:\n${heard || '(nothing was transcribed)'}` },
        ],
        signal: AbortSignal.any([signal, AbortSignal.timeout(deps.timeoutMs ?? SUMMARY_LLM_TIMEOUT_MS)]),
      });
      const text = plain(result.content ?? '');
      if (!text) throw new Error('the model returned an empty briefing');
      return text;
    } catch (err) {
      deps.logger?.warn({ err: (err as Error).message, assistantId: assistant.id }, 'supervisor briefing failed: using the model summary');
      throw err;
    }
  };
}

/**
 * Keeps the latest conversation history an agent turn was asked with (one per call): wrap the
 * engine's agent with `agent` and read it back with `text()` when the briefing is written.
 */
export class HeardHistory {
  private history: readonly TurnMessage[] = [];

  agent<A extends { runTurn(input: TurnInput): Promise<TurnResult> }>(inner: A): { runTurn(input: TurnInput): Promise<TurnResult> } {
    return {
      runTurn: (input) => {
        this.history = [...input.history];
        return inner.runTurn(input);
      },
    };
  }

  text(): string {
    return historyText(this.history);
  }
}
