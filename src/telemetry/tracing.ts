/**
 * Tracing setup. With an OTLP endpoint configured, the SDK is loaded (dynamic imports: with
 * tracing off none of it is ever loaded), spans are batched and POSTed over OTLP/HTTP (JSON) to
 * the endpoint, W3C trace context is propagated on outgoing requests, and the active span
 * follows async work (AsyncLocalStorage). `shutdown` flushes what is batched and uninstalls it
 * all, so an engine stopped in a process leaves nothing behind.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import type { Sampler } from '@opentelemetry/sdk-trace-base';
import { AsyncLocalContextManager } from './context-manager.ts';
import type { TracingConfig } from './otel-env.ts';
import { setTracer } from './spans.ts';

export interface Tracing {
  /** Exports what is still batched (bounded by the export timeout) and uninstalls the SDK. */
  shutdown(): Promise<void>;
}

const TRACER_NAME = 'switchboard';

/** Loads and installs the SDK when `cfg.enabled`; undefined (nothing loaded) otherwise. */
export async function startTracing(cfg: TracingConfig | undefined): Promise<Tracing | undefined> {
  if (!cfg?.enabled || !cfg.tracesUrl) return undefined;
  const [sdk, { OTLPTraceExporter }, { resourceFromAttributes }, { W3CTraceContextPropagator }] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/core'),
  ]);
  const ratio = cfg.samplerRatio;
  const samplers: Record<TracingConfig['sampler'], () => Sampler> = {
    always_on: () => new sdk.AlwaysOnSampler(),
    always_off: () => new sdk.AlwaysOffSampler(),
    traceidratio: () => new sdk.TraceIdRatioBasedSampler(ratio),
    parentbased_always_on: () => new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() }),
    parentbased_always_off: () => new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() }),
    parentbased_traceidratio: () => new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(ratio) }),
  };
  const exporter = new OTLPTraceExporter({ url: cfg.tracesUrl, headers: { ...cfg.headers }, timeoutMillis: cfg.exportTimeoutMs });
  const provider = new sdk.BasicTracerProvider({
    resource: resourceFromAttributes({ ...cfg.resourceAttributes, 'service.name': cfg.serviceName }),
    sampler: samplers[cfg.sampler](),
    spanProcessors: [
      new sdk.BatchSpanProcessor(exporter, { scheduledDelayMillis: cfg.exportDelayMs, exportTimeoutMillis: cfg.exportTimeoutMs }),
    ],
  });
  const contextManager = new AsyncLocalContextManager();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  setTracer(provider.getTracer(TRACER_NAME));
  let stopping: Promise<void> | undefined;
  return {
    shutdown() {
      stopping ??= (async () => {
        setTracer(undefined);
        try {
          await provider.shutdown();
        } finally {
          trace.disable();
          propagation.disable();
          context.disable();
        }
      })();
      return stopping;
    },
  };
}
