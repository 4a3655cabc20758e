/**
 * Liveness and readiness, apart, for load balancers and orchestrators:
 *
 * - `GET /healthz` (live): 200 while the process serves HTTP at all, draining or not, so a
 *   supervisor does not kill a node that is finishing its calls. The body says which:
 *   `{ status: 'ok', ready, draining }`.
 * - `GET /readyz` (ready): 200 while the node takes new calls; 503 from the moment it drains
 *   (SIGTERM), so a balancer stops sending it work while its live calls go on.
 *
 * Neither needs a key nor says anything about calls or accounts.
 */
import type { FastifyInstance } from 'fastify';

export interface Readiness {
  /** True from the start of a drain until the process exits. */
  draining: boolean;
}

/** What a node not wired to a SIP server (an API-only test app) reports: ready. */
const ALWAYS_READY: () => Readiness = () => ({ draining: false });

export function registerHealthRoutes(app: FastifyInstance, readiness: () => Readiness = ALWAYS_READY): void {
  app.get('/healthz', async () => {
    const { draining } = readiness();
    return { status: 'ok', ready: !draining, draining };
  });
  app.get('/readyz', async (_req, reply) => {
    const { draining } = readiness();
    if (draining) void reply.code(503);
    return { status: draining ? 'draining' : 'ready', ready: !draining, draining };
  });
}
