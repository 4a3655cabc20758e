/**
 * A call as a trace: one `call` span from the engine's start to the hang-up, and a `call.turn`
 * child per assistant turn. A reply turn's span starts where the caller stopped speaking and
 * carries the turn's latency parts as timed events (STT final, end of turn, LLM first token, TTS
 * first byte, first RTP packet) and as `switchboard.latency.*_ms` attributes, the same numbers
 * as the transcript's latency and the turn-latency histograms. Provider requests made while a
 * turn runs are the turn's children (the turn's work runs in its context, `inTurn`).
 *
 * Fed from the cascade's timeline (call times in ms from answer, mapped to wall time at the
 * `answer` event) and from the turn when it is recorded. Off (undefined) with tracing off.
 */
import { context, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { TimelineEvent } from '../call/cascade/timeline.ts';
import { failSpan, startSpan, tracingOn } from './spans.ts';

export interface CallTraceInit {
  uuid: string;
  direction: string;
  mode: string;
  trunk: string;
  assistantId: number;
}

/** What a finished turn tells the trace (SpokenTurn has these fields); times in ms from answer. */
export interface TracedTurn {
  id: number;
  failed?: 'llm' | 'tts' | undefined;
  firstTokenAtMs?: number | undefined;
  ttsFirstAudioAtMs?: number | undefined;
  ttsFirstAudioMs?: number | undefined;
  firstFrameAtMs?: number | undefined;
}

/** The part of a CallTrace the pipeline engine talks to (CascadeDeps.trace). */
export interface TurnTracer {
  event(e: TimelineEvent): void;
  inTurn<T>(turnId: number, fn: () => T): T;
  turnEnded(turn: TracedTurn, endMs: number, interrupted: boolean): void;
}

interface CallerTurn {
  sttFinalAtMs?: number;
  speechEndMs?: number;
  decisionAtMs?: number;
  reason?: string;
}

interface OpenTurn {
  span: Span;
  ctx: Context;
  caller: CallerTurn;
}

const CALL_TRACE = Symbol.for('switchboard.call-trace');

export class CallTrace implements TurnTracer {
  readonly span: Span;
  readonly ctx: Context;
  /** Wall time (ms since epoch) of the current engine run's answer (its timeline's zero). */
  private zeroMs = Date.now();
  private caller: CallerTurn = {};
  private readonly turns = new Map<number, OpenTurn>();
  private ended = false;

  constructor(span: Span, parent: Context) {
    this.span = span;
    this.ctx = trace.setSpan(parent, span).setValue(CALL_TRACE, this);
  }

  /** Runs `fn` (the whole call's work) with the call span active. */
  run<T>(fn: () => T): T {
    return context.with(this.ctx, fn);
  }

  private wall(atMs: number): number {
    return this.zeroMs + atMs;
  }

  event(e: TimelineEvent): void {
    switch (e.type) {
      case 'answer':
        this.zeroMs = Date.now() - e.atMs;
        this.span.addEvent('answer', undefined, this.wall(e.atMs));
        return;
      case 'stt-final':
        this.caller.sttFinalAtMs = e.atMs;
        return;
      case 'end-of-turn':
        if (!e.taken) return;
        this.caller.speechEndMs = e.atMs - e.waitedMs;
        this.caller.decisionAtMs = e.atMs;
        this.caller.reason = e.reason;
        return;
      case 'turn-start':
        this.startTurn(e.turn, e.kind, e.atMs);
        return;
      case 'assistant-audio-start':
        this.turns.get(e.turn)?.span.addEvent('assistant.audio_start', undefined, this.wall(e.atMs));
        return;
      case 'interruption':
        if (e.taken) this.span.addEvent('interruption', { 'switchboard.interruption.words': e.words }, this.wall(e.atMs));
        return;
      case 'provider-error':
        this.span.addEvent('provider.error', { 'switchboard.provider.kind': e.provider, 'switchboard.retrying': e.retrying }, this.wall(e.atMs));
        return;
      case 'hang-up':
        this.span.setAttribute('switchboard.call.ended_by', e.reason);
        return;
      default:
        return;
    }
  }

  private startTurn(id: number, kind: string, atMs: number): void {
    const caller = kind === 'reply' ? this.caller : {};
    if (kind === 'reply') this.caller = {};
    const startMs = caller.speechEndMs !== undefined && caller.speechEndMs <= atMs ? caller.speechEndMs : atMs;
    const span = startSpan('call.turn', { 'switchboard.turn.number': id, 'switchboard.turn.kind': kind }, { parent: this.ctx, startMs: this.wall(startMs) });
    if (!span) return;
    if (caller.sttFinalAtMs !== undefined) span.addEvent('stt.final', undefined, this.wall(caller.sttFinalAtMs));
    if (caller.decisionAtMs !== undefined) {
      span.addEvent('end_of_turn', caller.reason ? { 'switchboard.turn.end_reason': caller.reason } : undefined, this.wall(caller.decisionAtMs));
    }
    this.turns.set(id, { span, ctx: trace.setSpan(this.ctx, span), caller });
  }

  inTurn<T>(turnId: number, fn: () => T): T {
    const t = this.turns.get(turnId);
    return t ? context.with(t.ctx, fn) : fn();
  }

  turnEnded(turn: TracedTurn, endMs: number, interrupted: boolean): void {
    const t = this.turns.get(turn.id);
    if (!t) return;
    this.turns.delete(turn.id);
    const { span, caller } = t;
    const at = (ms: number | undefined): number | undefined => (ms === undefined ? undefined : this.wall(ms));
    if (turn.firstTokenAtMs !== undefined) span.addEvent('llm.first_token', undefined, at(turn.firstTokenAtMs));
    if (turn.ttsFirstAudioAtMs !== undefined) span.addEvent('tts.first_byte', undefined, at(turn.ttsFirstAudioAtMs));
    if (turn.firstFrameAtMs !== undefined) span.addEvent('rtp.first_packet', undefined, at(turn.firstFrameAtMs));
    span.setAttributes({ 'switchboard.turn.interrupted': interrupted, ...latencyAttributes(turn, caller) });
    if (turn.failed) span.setStatus({ code: SpanStatusCode.ERROR, message: `${turn.failed} failed` });
    span.end(this.wall(endMs));
  }

  /** The call is over: its end cause, and every turn still open is closed with it. */
  end(attrs: { endCause?: string | undefined; error?: unknown }): void {
    if (this.ended) return;
    this.ended = true;
    for (const { span } of this.turns.values()) {
      span.setAttribute('switchboard.turn.aborted', true);
      span.end();
    }
    this.turns.clear();
    if (attrs.endCause) this.span.setAttribute('switchboard.call.end_cause', attrs.endCause);
    if (attrs.error !== undefined) failSpan(this.span, attrs.error);
    else if (attrs.endCause === 'error') this.span.setStatus({ code: SpanStatusCode.ERROR, message: 'call ended on an error' });
    this.span.end();
  }
}

/** The latency parts as TurnBook computes them for the transcript (ms). */
function latencyAttributes(turn: TracedTurn, c: CallerTurn): Record<string, number> {
  const out: Record<string, number> = {};
  if (c.decisionAtMs === undefined || c.speechEndMs === undefined) return out;
  out['switchboard.latency.endpointing_ms'] = c.decisionAtMs - c.speechEndMs;
  if (c.sttFinalAtMs !== undefined) out['switchboard.latency.stt_final_ms'] = c.sttFinalAtMs - c.speechEndMs;
  if (turn.firstTokenAtMs !== undefined) out['switchboard.latency.llm_first_token_ms'] = turn.firstTokenAtMs - c.decisionAtMs;
  if (turn.ttsFirstAudioMs !== undefined) out['switchboard.latency.tts_first_audio_ms'] = turn.ttsFirstAudioMs;
  if (turn.firstFrameAtMs !== undefined) {
    out['switchboard.latency.first_frame_out_ms'] = turn.firstFrameAtMs - c.decisionAtMs;
    out['switchboard.latency.total_ms'] = turn.firstFrameAtMs - c.speechEndMs;
  }
  return out;
}

/** A call span for a call now starting (undefined with tracing off). */
export function startCallTrace(init: CallTraceInit): CallTrace | undefined {
  if (!tracingOn()) return undefined;
  const span = startSpan(
    'call',
    {
      'switchboard.call.uuid': init.uuid,
      'switchboard.call.direction': init.direction,
      'switchboard.call.mode': init.mode,
      'switchboard.call.trunk': init.trunk,
      'switchboard.assistant.id': init.assistantId,
    },
    { root: true },
  );
  return span ? new CallTrace(span, context.active()) : undefined;
}

/** The call whose work is running now (its engine picks up the trace from here). */
export function currentCallTrace(): CallTrace | undefined {
  if (!tracingOn()) return undefined;
  return context.active().getValue(CALL_TRACE) as CallTrace | undefined;
}
