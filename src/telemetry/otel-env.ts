/**
 * The standard OpenTelemetry variables, as far as Switchboard honours them, parsed into plain
 * values by src/config.ts (the SDK is never left to read the environment on its own, so what
 * the engine runs with is what config says).
 */

export type TracesSampler =
  | 'always_on'
  | 'always_off'
  | 'traceidratio'
  | 'parentbased_always_on'
  | 'parentbased_always_off'
  | 'parentbased_traceidratio';

export const TRACES_SAMPLERS: readonly TracesSampler[] = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
];

export interface TracingConfig {
  /** Tracing on: an OTLP endpoint is set and OTEL_SDK_DISABLED is not true. */
  enabled: boolean;
  /** Where spans are POSTed (OTLP/HTTP, JSON). */
  tracesUrl?: string;
  /** Sent with every export (an API key); never logged. */
  headers: Readonly<Record<string, string>>;
  serviceName: string;
  resourceAttributes: Readonly<Record<string, string>>;
  sampler: TracesSampler;
  /** The ratio of traceidratio samplers, 0..1. */
  samplerRatio: number;
  /** How often the batch processor exports (OTEL_BSP_SCHEDULE_DELAY). */
  exportDelayMs: number;
  /** How long one export may take (OTEL_EXPORTER_OTLP_TIMEOUT). */
  exportTimeoutMs: number;
}

/**
 * `key1=value1,key2=value2` (W3C baggage style, values percent-decoded), as
 * OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES are written. Throws on an entry
 * without a key or `=`.
 */
export function parseKeyValueList(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const eq = entry.indexOf('=');
    const key = eq > 0 ? entry.slice(0, eq).trim() : '';
    if (key === '') throw new Error(`not key=value: "${entry.slice(0, 40)}"`);
    let value = entry.slice(eq + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      throw new Error(`bad percent-encoding in the value of ${key}`);
    }
    out[key] = value;
  }
  return out;
}

/**
 * The traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else OTEL_EXPORTER_OTLP_ENDPOINT
 * with `v1/traces` appended (the OTLP/HTTP rule for the base endpoint).
 */
export function tracesUrl(endpoint: string | undefined, tracesEndpoint: string | undefined): string | undefined {
  if (tracesEndpoint) return tracesEndpoint;
  if (!endpoint) return undefined;
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}
