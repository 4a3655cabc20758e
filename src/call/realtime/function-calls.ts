/**
 * Tools in realtime calls are the model's function calls: the same AgentTools the pipeline and
 * chats use (src/agent/tools.ts buildTools: custom HTTP tools and knowledge search, which in these
 * modes is only ever a function), plus the voice built-ins the call layer passes in and
 * end_call. The engine runs each call and sends its result back to the model.
 *
 * chat_llm_fallback_id rule: a turn is "tool-heavy" when one model response asks for two or more
 * functions at once, or asks for functions again after it already got results since the caller
 * last spoke. With a fallback model set, such a turn is answered by the text agent (Agent.runTurn
 * on the fallback model, which runs its own tool rounds); the realtime model gets the answer as
 * the result of its pending calls and speaks it (multimodal) or our TTS does (dualplex).
 */
import { traceTool } from '../../telemetry/tools.ts';
import { buildTools } from '../../agent/tools.ts';
import type { AgentDeps, AgentTool, FunctionCallRecord, TurnInput, TurnMessage, TurnResult } from '../../agent/types.ts';
import type { FunctionArguments } from '../../providers/realtime/realtime.ts';
import type { RealtimeAssistant, RealtimeSettings } from './settings.ts';

export const END_CALL = 'end_call';

export interface PendingCall {
  callId: string;
  name: string;
  arguments: FunctionArguments;
}

export interface ToolSources {
  /** Custom tools and knowledge search (the agent's deps); none when unset. */
  agentDeps?: AgentDeps;
  /** Voice built-ins from the call layer (transfer, DTMF, keypad, calendar). */
  extraTools?: AgentTool[];
}

export async function realtimeFunctionTools(assistant: RealtimeAssistant, settings: RealtimeSettings, src: ToolSources): Promise<Map<string, AgentTool>> {
  const extra = [...(src.extraTools ?? [])];
  if (settings.endCallTool && !extra.some((t) => t.spec.name === END_CALL)) extra.push(endCallTool(settings.endCallTool.description));
  if (src.agentDeps) return buildTools(assistant, src.agentDeps, 'voice', extra);
  return new Map(extra.map((t) => [t.spec.name, t]));
}

/** end_call when the call layer gave none: the engine hangs up once the goodbye has played. */
function endCallTool(description: string): AgentTool {
  return {
    spec: {
      name: END_CALL,
      description: `End the phone call once the conversation is complete; say goodbye in the same response. ${description}`.trim(),
      parameters: { type: 'object', properties: {} },
    },
    ends: true,
    run: async () => ({ ended: true }),
  };
}

export interface CallOutcome {
  record: FunctionCallRecord;
  /** The tool ends the call (end_call): hang up after the goodbye. */
  ends: boolean;
}

/** Run one function call; a failure is a result the model can read, never a thrown error. */
export async function runFunctionCall(tools: ReadonlyMap<string, AgentTool>, call: PendingCall, signal: AbortSignal): Promise<CallOutcome> {
  const tool = tools.get(call.name);
  const args = call.arguments.ok && isRecord(call.arguments.value) ? call.arguments.value : {};
  let result: Record<string, unknown>;
  if (!tool) result = { error: `Unknown function ${call.name}` };
  else if (!call.arguments.ok) result = { error: `Invalid arguments (not JSON): ${call.arguments.error}` };
  else {
    try {
      result = await traceTool(call.name, () => tool.run(args, signal));
    } catch (err) {
      result = { error: (err as Error).message };
    }
  }
  return { record: { name: call.name, arguments: args, result }, ends: tool?.ends === true && !('error' in result) };
}

export function isToolHeavy(callsInResponse: number, toolRoundsSinceCallerSpoke: number): boolean {
  return callsInResponse >= 2 || toolRoundsSinceCallerSpoke >= 1;
}

export interface FallbackAgent {
  runTurn(input: TurnInput): Promise<TurnResult>;
}

/** The tool-heavy turn through the text LLM, on the fallback model, with the same tools. */
export function runFallbackTurn(
  agent: FallbackAgent,
  assistant: RealtimeAssistant,
  fallbackModelId: number,
  history: readonly TurnMessage[],
  variables: Record<string, unknown>,
  extraTools: AgentTool[],
  signal: AbortSignal,
): Promise<TurnResult> {
  return agent.runTurn({
    assistant: { ...assistant, config: { ...assistant.config, llm_model_id: fallbackModelId } },
    history: [...history],
    variables,
    signal,
    channel: 'voice',
    extraTools,
  });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
