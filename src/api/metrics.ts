import client from 'prom-client';

/** One registry per engine instance (tests build several apps in one process). */
export function createMetrics() {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const httpDuration = new client.Histogram({
    name: 'switchboard_http_request_duration_seconds',
    help: 'REST request duration',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return { registry, httpDuration };
}

export type Metrics = ReturnType<typeof createMetrics>;
