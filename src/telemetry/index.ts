/**
 * OpenTelemetry traces (docs/TRACING.md). Off unless an OTLP endpoint is configured; then
 * calls, turns, provider requests, tool calls and webhook deliveries are spans, and outgoing
 * HTTP requests carry W3C `traceparent`.
 */
export { startTracing, type Tracing } from './tracing.ts';
export { injectTraceHeaders, traceHeaders, withTraceHeaders, tracingOn, traced, type SpanHandle } from './spans.ts';
export { startCallTrace, currentCallTrace, CallTrace, type TurnTracer, type TracedTurn } from './call-trace.ts';
export { traceLlm, traceTts, traceStt, traceRealtime } from './provider-spans.ts';
export { traceTool, traceWebhook } from './tools.ts';
export type { TracingConfig } from './otel-env.ts';
