import type { FastifyInstance } from 'fastify';

/**
 * Cross-origin access to the API: closed by default (no CORS headers at all, so a browser page
 * from another origin cannot read any answer). SWITCHBOARD_CORS_ORIGINS opens it to the exact
 * origins an operator lists (a dashboard on its own domain), or to any with `*`. Keys still travel
 * in the Authorization header; no cookies are used, so credentials mode is never allowed.
 */

export const CORS_MAX_AGE_S = 600;
const ALLOWED_HEADERS = 'Authorization, Content-Type, X-Request-Id';
const ALLOWED_METHODS = 'GET, POST, PUT, DELETE';

export function registerCors(app: FastifyInstance, origins: readonly string[]): void {
  if (origins.length === 0) return;
  const any = origins.includes('*');
  const allowed = new Set(origins);
  // Before authentication: a preflight carries no key.
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (typeof origin !== 'string' || !request.url.startsWith('/api/')) return;
    if (!any && !allowed.has(origin)) return;
    void reply.header('Access-Control-Allow-Origin', any ? '*' : origin).header('Vary', 'Origin');
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method']) {
      return reply
        .code(204)
        .header('Access-Control-Allow-Methods', ALLOWED_METHODS)
        .header('Access-Control-Allow-Headers', ALLOWED_HEADERS)
        .header('Access-Control-Max-Age', String(CORS_MAX_AGE_S))
        .send();
    }
    void reply.header('Access-Control-Expose-Headers', 'Retry-After, X-Request-Id, X-RateLimit-Remaining');
  });
}
