/**
 * Running the model's function calls for a realtime call: each call's result goes back to the
 * model, which then answers (response.create); a tool-heavy turn goes to the text LLM instead
 * when chat_llm_fallback_id is set (the rule is in function-calls.ts). While a tool runs, the
 * call's re-engagement rule covers the wait with a short line rather than dead air.
 *
 * A call and its output are recorded in the conversation as they happen, so a model connection
 * that drops while a tool runs is re-seeded with the call, and the output goes to whichever
 * connection is current when the tool returns (or into the next re-seed if none is).
 */
import type { AgentTool } from '../../agent/types.ts';
import type { EngineLogger } from '../cascade/deps.ts';
import type { Conversation } from './conversation.ts';
import type { FunctionArguments } from '../../providers/realtime/realtime.ts';
import { isToolHeavy, runFallbackTurn, runFunctionCall, type FallbackAgent, type PendingCall } from './function-calls.ts';
import type { ModelLink } from './model-link.ts';
import type { RealtimeAssistant } from './settings.ts';
import type { RealtimeCallCounters, RealtimeTimelineEvent } from './timeline.ts';

export interface ToolTurnHost {
  signal: AbortSignal;
  now(): number;
  link: ModelLink;
  conversation: Conversation;
  counters: RealtimeCallCounters;
  emit(event: RealtimeTimelineEvent): void;
  logger?: EngineLogger | undefined;
  /** Speak the fallback model's answer (the realtime model in multimodal, our TTS in dualplex). */
  speakAnswer(text: string): void;
  /** end_call ran: hang up once nothing is left to say. */
  endWhenQuiet(): void;
}

export interface ToolTurnOptions {
  tools: ReadonlyMap<string, AgentTool>;
  assistant: RealtimeAssistant;
  variables: Record<string, unknown>;
  fallback?: { agent: FallbackAgent; extraTools: AgentTool[] } | undefined;
}

export class ToolTurns {
  /** Tools (or a fallback turn) in progress. */
  running = 0;
  /** Tool rounds since the caller last spoke. */
  private rounds = 0;
  /**
   * Results were sent (or are waiting for a connection): the next model response answers them
   * (their records go on it); a reconnect asks for that response.
   */
  answering = false;
  /** end_call ran. */
  endAfterSpeech = false;

  constructor(
    private readonly host: ToolTurnHost,
    private readonly o: ToolTurnOptions,
  ) {}

  callerSpoke(): void {
    this.rounds = 0;
  }

  async run(calls: PendingCall[]): Promise<void> {
    const h = this.host;
    if (!h.link.conn) return;
    for (const call of calls) h.conversation.callStarted(call.callId, call.name, argumentsText(call.arguments));
    const fallbackId = this.o.assistant.config.chat_llm_fallback_id;
    if (this.o.fallback && fallbackId != null && isToolHeavy(calls.length, this.rounds)) return this.runFallback(calls, fallbackId);
    this.running++;
    try {
      for (const call of calls) {
        // Not tracked as work: a tool's latency is call time (a test's slow tool waits on the clock).
        const out = await runFunctionCall(this.o.tools, call, h.signal);
        if (h.signal.aborted) return;
        h.counters.functionCalls++;
        h.conversation.functionCalled(out.record);
        h.emit({ type: 'function-call', atMs: h.now(), name: call.name, callId: call.callId, ok: !('error' in out.record.result), via: 'engine' });
        this.output(call.callId, JSON.stringify(out.record.result));
        if (out.ends) this.endAfterSpeech = true;
      }
    } finally {
      this.running--;
    }
    this.rounds++;
    // After end_call the goodbye was in the same response: nothing more to ask the model.
    if (this.endAfterSpeech) return h.endWhenQuiet();
    this.answering = true;
    h.link.requestResponse('reply');
  }

  /** A call's output: recorded for re-seeding, and sent on the connection current now. */
  private output(callId: string, output: string): void {
    this.host.conversation.callOutput(callId, output);
    this.host.link.conn?.sendFunctionResult(callId, output);
  }

  private async runFallback(calls: PendingCall[], fallbackId: number): Promise<void> {
    const h = this.host;
    const fb = this.o.fallback!;
    this.running++;
    let reply = '';
    try {
      const result = await runFallbackTurn(fb.agent, this.o.assistant, fallbackId, h.conversation.history, this.o.variables, fb.extraTools, h.signal);
      reply = result.reply.trim();
      for (const r of result.functionCalls) h.conversation.functionCalled(r);
      h.counters.functionCalls += result.functionCalls.length;
      if (result.ended) this.endAfterSpeech = true;
    } catch (err) {
      h.logger?.warn({ err: (err as Error).message }, 'fallback LLM turn failed');
    } finally {
      this.running--;
    }
    if (h.signal.aborted) return;
    // The realtime model's calls still need results, or its conversation stays open-ended.
    for (const call of calls) {
      h.emit({ type: 'function-call', atMs: h.now(), name: call.name, callId: call.callId, ok: reply !== '', via: 'fallback-llm' });
      this.output(call.callId, JSON.stringify(reply ? { answer: reply, answered_by: 'fallback_model' } : { error: 'The lookup failed.' }));
    }
    this.rounds++;
    if (reply) return h.speakAnswer(reply);
    this.answering = true;
    h.link.requestResponse('reply');
  }
}

/** The arguments as the model wrote them (re-sent verbatim when re-seeding). */
function argumentsText(args: FunctionArguments): string {
  return args.ok ? JSON.stringify(args.value) : args.raw;
}
