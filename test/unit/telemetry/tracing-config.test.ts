/**
 * The OTEL_* variables as config parses them (src/config.ts, src/telemetry/otel-env.ts): off by
 * default, on with an endpoint, the OTLP URL rules, header and resource lists, the sampler, and
 * clear errors that never echo a header's value.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.ts';
import { parseKeyValueList, tracesUrl } from '../../../src/telemetry/otel-env.ts';

const base = { SWITCHBOARD_DATA_DIR: '/tmp/x', SIP_PUBLIC_HOST: '127.0.0.1' };

describe('tracing configuration', () => {
  it('is off when no OTLP endpoint is set', () => {
    const t = loadConfig(base).tracing!;
    expect(t.enabled).toBe(false);
    expect(t.tracesUrl).toBeUndefined();
    expect(t).toMatchObject({ serviceName: 'switchboard', sampler: 'parentbased_always_on', samplerRatio: 1, exportDelayMs: 5000, exportTimeoutMs: 10_000 });
  });

  it('appends v1/traces to OTEL_EXPORTER_OTLP_ENDPOINT and takes OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is', () => {
    expect(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toMatchObject({ enabled: true, tracesUrl: 'http://collector:4318/v1/traces' });
    expect(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing?.tracesUrl).toBe('http://collector:4318/v1/traces');
    expect(
      loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b.example/otlp/traces' }).tracing?.tracesUrl,
    ).toBe('https://b.example/otlp/traces');
    expect(tracesUrl(undefined, undefined)).toBeUndefined();
  });

  it('stays off with OTEL_SDK_DISABLED=true even with an endpoint', () => {
    expect(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).tracing?.enabled).toBe(false);
  });

  it('parses headers (traces-specific ones win), resource attributes, service name and sampler', () => {
    const t = loadConfig({
      ...base,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=general,x-tenant=acme%20corp',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-api-key=traces',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod, service.namespace=voice',
      OTEL_SERVICE_NAME: 'switchboard-eu',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    }).tracing!;
    expect(t.headers).toEqual({ 'x-api-key': 'traces', 'x-tenant': 'acme corp' });
    expect(t.resourceAttributes).toEqual({ 'deployment.environment': 'prod', 'service.namespace': 'voice' });
    expect(t).toMatchObject({ serviceName: 'switchboard-eu', sampler: 'parentbased_traceidratio', samplerRatio: 0.25 });
  });

  it('refuses a malformed header list, an unknown sampler and a ratio outside 0..1, without echoing values', () => {
    const bad = (env: Record<string, string>): string => {
      try {
        loadConfig({ ...base, ...env });
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    const headers = bad({ OTEL_EXPORTER_OTLP_HEADERS: 'Bearer-s3cret-token' });
    expect(headers).toMatch(/OTEL_EXPORTER_OTLP_HEADERS: must be key=value pairs/);
    expect(bad({ OTEL_EXPORTER_OTLP_HEADERS: 'authorization=%E0%A4%A' })).not.toContain('%E0%A4%A');
    expect(bad({ OTEL_TRACES_SAMPLER: 'sometimes' })).toMatch(/OTEL_TRACES_SAMPLER/);
    expect(bad({ OTEL_TRACES_SAMPLER_ARG: '2' })).toMatch(/OTEL_TRACES_SAMPLER_ARG/);
    expect(bad({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toMatch(/OTEL_EXPORTER_OTLP_ENDPOINT/);
  });

  it('reads key=value lists as the OTel spec writes them', () => {
    expect(parseKeyValueList('')).toEqual({});
    expect(parseKeyValueList('a=1,,b = x=y ')).toEqual({ a: '1', b: 'x=y' });
    expect(() => parseKeyValueList('=v')).toThrow(/not key=value/);
  });
});
