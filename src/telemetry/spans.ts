/**
 * The thin span API the rest of the engine calls. With tracing off (no OTLP endpoint) there is
 * no tracer: every helper checks one module variable and runs the work as it is, no span object
 * made, no context switched, no header added. With it on, spans go to the tracer that
 * src/telemetry/tracing.ts installed, and the active context follows async work, so a span
 * started inside another (a provider request inside a turn) is its child without being told.
 */
import { context, propagation, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { failureReason } from '../call/failures.ts';

let tracer: Tracer | undefined;

/** Installed by startTracing, removed by its shutdown. */
export function setTracer(t: Tracer | undefined): void {
  tracer = t;
}

export function tracingOn(): boolean {
  return tracer !== undefined;
}

/** What instrumented code may do to its span; a no-op when tracing is off. */
export interface SpanHandle {
  setAttributes(attributes: Attributes): void;
  addEvent(name: string, attributes?: Attributes, atMs?: number): void;
  /** Marks the span failed (status ERROR) with a message; the work itself goes on. */
  fail(message: string): void;
}

export const NOOP_HANDLE: SpanHandle = {
  setAttributes() {},
  addEvent() {},
  fail() {},
};

export function handleOf(span: Span): SpanHandle {
  return {
    setAttributes: (a) => void span.setAttributes(a),
    addEvent: (name, a, atMs) => void span.addEvent(name, a, atMs),
    fail: (message) => void span.setStatus({ code: SpanStatusCode.ERROR, message }),
  };
}

/**
 * Marks `span` failed by `err`. Spans leave the process, so they carry only the short reason
 * (HTTP status, close code or network cause, src/call/failures.ts) and the provider's label,
 * never the error's message or stack: a vendor (or a proxy at OPENAI_BASE_URL) may echo the
 * API key in it. The exception event holds its type only.
 */
export function failSpan(span: Span, err: unknown, provider?: string): void {
  const type = err instanceof Error ? err.constructor.name || err.name : typeof err;
  span.addEvent('exception', { 'exception.type': type });
  span.setStatus({ code: SpanStatusCode.ERROR, message: safeFailure(err, provider) });
}

/** "openai 401", "deepgram connection refused": what a span may say about a failure. */
export function safeFailure(err: unknown, provider?: string): string {
  const reason = failureReason(err);
  return provider ? `${provider} ${reason}` : reason;
}

export interface SpanOptions {
  /** A new trace, whatever is active (work that outlives what started it: webhook deliveries). */
  root?: boolean;
  /** The parent, when not the active context. */
  parent?: Context;
  startMs?: number;
  /** The provider whose work the span is (its label names the failure). */
  provider?: string;
}

/** Starts a span (undefined with tracing off); the caller ends it. */
export function startSpan(name: string, attributes: Attributes, opts: SpanOptions = {}): Span | undefined {
  if (!tracer) return undefined;
  return tracer.startSpan(name, { attributes, ...(opts.root && { root: true }), ...(opts.startMs !== undefined && { startTime: opts.startMs }) }, opts.parent ?? context.active());
}

/** Runs `fn` with `span` as the active span (its provider requests and HTTP calls are its children). */
export function runInSpan<T>(span: Span | undefined, fn: () => T): T {
  if (!span) return fn();
  return context.with(trace.setSpan(context.active(), span), fn);
}

/**
 * `fn` in a span of its own: the span ends when the promise settles, failed when it rejects.
 * With tracing off this is `fn(noop)`.
 */
export function traced<T>(name: string, attributes: Attributes, fn: (span: SpanHandle) => Promise<T>, opts: SpanOptions = {}): Promise<T> {
  if (!tracer) return fn(NOOP_HANDLE);
  const span = startSpan(name, attributes, opts)!;
  const ctx = trace.setSpan(opts.parent ?? context.active(), span);
  return context.with(ctx, async () => {
    try {
      return await fn(handleOf(span));
    } catch (err) {
      failSpan(span, err, opts.provider);
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * Adds `traceparent` (and `tracestate`) for the active span to an outgoing request's headers.
 * A no-op with tracing off, or when the caller already set one.
 */
export function injectTraceHeaders(headers: Record<string, string>): void {
  if (!tracer || headers.traceparent !== undefined) return;
  propagation.inject(context.active(), headers);
}

/** The headers to add to a request opened now (a WebSocket handshake); `{}` with tracing off. */
export function traceHeaders(): Record<string, string> {
  if (!tracer) return {};
  const out: Record<string, string> = {};
  propagation.inject(context.active(), out);
  return out;
}

/** `init` with `traceparent` for the active span added to its headers (for the global fetch). */
export function withTraceHeaders(init: RequestInit | undefined): RequestInit | undefined {
  if (!tracer) return init;
  const headers = new Headers(init?.headers);
  if (headers.has('traceparent')) return init;
  const extra = traceHeaders();
  for (const [k, v] of Object.entries(extra)) headers.set(k, v);
  return { ...init, headers };
}
