/**
 * Post-call evaluation: the assistant's `post_call_schema` fields extracted from the transcript
 * by one structured LLM call.
 *
 * The LLM provider interface (src/providers/llm/types.ts) offers tools but no `response_format`,
 * so the structure comes from a single function the model is told to call, whose parameters are
 * the schema. A reply with a JSON object as text is accepted too (some models answer that way).
 * Whatever comes back is validated against the schema: values are coerced to the declared type
 * where that is unambiguous, anything else (and anything missing) becomes null, unknown keys are
 * dropped. A failure is stored as `{error}` and never blocks the webhook.
 */
import type { ResolvedModel } from '../../agent/types.ts';
import type { AssistantRecord } from '../../store/repos/assistants.ts';
import type { LlmResult } from '../../providers/llm/types.ts';
import type { PostCallDeps, PostCallTranscript } from './types.ts';

export type SchemaItem = NonNullable<AssistantRecord['config']['post_call_schema']>[number];
export type EvaluationValue = string | number | boolean | null;
export type Evaluation = Record<string, EvaluationValue> | { error: string };

export const EVALUATION_TOOL = 'record_call_evaluation';

const JSON_TYPE = { string: 'string', number: 'number', bool: 'boolean' } as const;

/** JSON Schema of the tool's arguments: every field required but nullable (unknown → null). */
export function evaluationJsonSchema(items: readonly SchemaItem[]): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const item of items) {
    properties[item.name] = { type: [JSON_TYPE[item.type], 'null'], description: item.description };
  }
  return { type: 'object', properties, required: items.map((i) => i.name), additionalProperties: false };
}

/** Whether this call gets an evaluation at all. */
export function wantsEvaluation(assistant: AssistantRecord | null): assistant is AssistantRecord {
  const c = assistant?.config;
  return !!c && c.post_call_evaluation && (c.post_call_schema?.length ?? 0) > 0;
}

/** `Assistant: …` / `Caller: …` lines, in time order. */
export function transcriptText(transcript: PostCallTranscript): string {
  return [...transcript.turns]
    .filter((t) => t.text.trim() !== '')
    .sort((a, b) => a.startMs - b.startMs)
    .map((t) => `${t.speaker === 'assistant' ? 'Assistant' : 'Caller'}: ${t.text.trim()}${t.interrupted ? ' [interrupted]' : ''}`)
    .join('\n');
}

function coerce(type: SchemaItem['type'], v: unknown): EvaluationValue {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'string':
      if (typeof v === 'string') return v;
      return typeof v === 'number' || typeof v === 'boolean' ? String(v) : null;
    case 'number': {
      if (typeof v === 'number') return Number.isFinite(v) ? v : null;
      if (typeof v === 'string' && v.trim() !== '') {
        const n = Number(v.trim());
        return Number.isFinite(n) ? n : null;
      }
      return null;
    }
    case 'bool':
      if (typeof v === 'boolean') return v;
      if (typeof v === 'string') {
        const s = v.trim().toLowerCase();
        if (s === 'true' || s === 'yes') return true;
        if (s === 'false' || s === 'no') return false;
      }
      if (v === 1 || v === 0) return v === 1;
      return null;
  }
}

/** Keeps exactly the schema's fields, each of its type or null. */
export function validateEvaluation(items: readonly SchemaItem[], raw: unknown): Record<string, EvaluationValue> {
  const obj = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const out: Record<string, EvaluationValue> = {};
  for (const item of items) out[item.name] = coerce(item.type, Object.hasOwn(obj, item.name) ? obj[item.name] : undefined);
  return out;
}

/** The arguments of our tool call, else the first JSON object in the text. */
export function extractArguments(result: LlmResult): unknown {
  const call = result.toolCalls.find((c) => c.name === EVALUATION_TOOL) ?? result.toolCalls[0];
  const text = call ? call.arguments : result.content;
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end < start) throw new Error('the model returned no evaluation');
  try {
    return JSON.parse(text.slice(start, end + 1));
  } catch {
    throw new Error('the model returned an evaluation that is not valid JSON');
  }
}

/**
 * The model used for evaluation: `llm_model_id` for pipeline assistants; realtime assistants
 * (multimodal/dualplex) use their text fallback `chat_llm_fallback_id` first, as for tool calls.
 * `resolveModel` falls back to the catalog's default chat model when neither resolves.
 */
export function evaluationModel(deps: Pick<PostCallDeps, 'resolveModel'>, assistant: AssistantRecord): ResolvedModel | undefined {
  const c = assistant.config;
  const id = assistant.mode === 'pipeline' ? (c.llm_model_id ?? c.chat_llm_fallback_id) : (c.chat_llm_fallback_id ?? c.llm_model_id);
  return deps.resolveModel(id);
}

function prompt(items: readonly SchemaItem[]): string {
  const fields = items.map((i) => `- ${i.name} (${i.type}): ${i.description}`).join('\n');
  return [
    'You analyse the transcript of a phone call between an AI assistant and a caller once the call is over.',
    `Extract the fields below and report them by calling the function ${EVALUATION_TOOL} exactly once.`,
    'Base every value only on the transcript. Use null for a field the call gives no evidence for.',
    '',
    'Fields:',
    fields,
  ].join('\n');
}

/**
 * Runs the evaluation. Returns undefined when the assistant does not ask for one; otherwise the
 * validated fields or `{error}` (never throws for model or parsing failures).
 */
export async function evaluateCall(
  deps: PostCallDeps,
  assistant: AssistantRecord | null,
  transcript: PostCallTranscript | null,
): Promise<Evaluation | undefined> {
  if (!wantsEvaluation(assistant)) return undefined;
  const items = assistant.config.post_call_schema ?? [];
  const text = transcript ? transcriptText(transcript) : '';
  // Nothing was said (unanswered, or silence): every field is unknown; no model call needed.
  if (text === '') return validateEvaluation(items, {});
  const model = evaluationModel(deps, assistant);
  if (!model) return { error: 'no language model is available for the evaluation' };
  try {
    const result = await model.provider.complete({
      model: model.model,
      temperature: 0,
      messages: [
        { role: 'system', content: prompt(items) },
        { role: 'user', content: `Transcript:\n${text}` },
      ],
      tools: [{ name: EVALUATION_TOOL, description: 'Record the values extracted from the call.', parameters: evaluationJsonSchema(items) }],
      signal: AbortSignal.timeout(deps.evaluationTimeoutMs ?? 60_000),
    });
    return validateEvaluation(items, extractArguments(result));
  } catch (err) {
    deps.logger.warn({ err, assistantId: assistant.id }, 'post-call evaluation failed');
    return { error: (err as Error).message || 'evaluation failed' };
  }
}
