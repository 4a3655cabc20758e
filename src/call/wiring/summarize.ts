/**
 * The supervisor briefing of warm_call_transfer (src/call/control/warm-transfer.ts): an LLM
 * writes 2–3 plain sentences per the tool's `summary_instructions` from the call's transcript so
 * far and the model's reason. The transcript is the conductor's conversation (every engine run of
 * the call, pipeline and realtime alike). The model is the assistant's own chat model, resolved as
 * for the post-call evaluation (`evaluationModel`); a multimodal or dualplex assistant without a
 * chat model gets the engine's default. Failures (no model, timeout, provider error, empty answer)
 * throw: the conductor then falls back to the model's own summary.
 */
import type { ResolvedModel, TurnMessage } from '../../agent/types.ts';
import type { AssistantRecord } from '../../store/repos/assistants.ts';
import type { BriefingRequest, ConductorDeps } from '../control/conductor.ts';
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

/** The conductor's `summarize`. */
export function llmSummarizer(deps: SummarizerDeps): Summarize {
  return async (assistant: AssistantRecord, brief: BriefingRequest, signal: AbortSignal): Promise<string> => {
    const model = evaluationModel(deps, assistant);
    if (!model) throw new Error('no language model is available for the briefing');
    const { instructions, context } = brief;
    const heard = historyText(brief.transcript);
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
