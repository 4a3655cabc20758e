import crypto from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { Api } from './route.ts';
import { authHook } from './auth.ts';
import { handleError } from './errors.ts';
import { API_WINDOWS, type RateLimiter } from './rate-limit.ts';
import { limiterFor } from '../cluster/limiter-for.ts';
import { openApiDocument } from './openapi.ts';
import { registerDocsRoutes } from './docs.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { registerRoutes } from './routes/index.ts';
import { registerConsoleRoutes, type ConsoleRoutes } from '../console/serve.ts';
import { registerHealthRoutes } from './health.ts';
import { registerCors } from './cors.ts';

export const API_PREFIX = '/api';
const BODY_LIMIT_BYTES = 1024 * 1024;

export interface BuiltApp {
  app: FastifyInstance;
  api: Api;
  metrics: Metrics;
  /** Every route fastify serves (method and full URL, HEAD excluded): what the OpenAPI test checks. */
  served: Array<{ method: string; url: string }>;
  /** The web console at /console (built on first use, or when `warm()` is called). */
  console: ConsoleRoutes;
}

export interface AppOptions {
  limiter?: RateLimiter;
  /** A registry built beforehand, so the call engine's histograms are served on /metrics too. */
  metrics?: Metrics;
}

/**
 * A request as the log shows it: the path without its query string. Clients put credentials in
 * query strings however often they are told not to (`?api_key=`), and a query names nothing the
 * log needs; the route and the request id find the request.
 */
export function requestForLog(req: FastifyRequest) {
  return {
    method: req.method,
    url: pathOnly(req.url),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

export function pathOnly(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** Builds the REST app: auth, limits, error shapes, every route, OpenAPI, health and metrics. */
export async function buildApp(ctx: AppContext, opts: AppOptions = {}): Promise<BuiltApp> {
  const app = Fastify({
    loggerInstance: ctx.logger.child({}, { serializers: { req: requestForLog } }) as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    // One line per request, written at completion by the onResponse hook below.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : crypto.randomUUID();
    },
    ajv: { customOptions: { coerceTypes: false } },
  });
  const metrics = opts.metrics ?? createMetrics();
  const limiter = opts.limiter ?? limiterFor(ctx.cluster, 'api-key', API_WINDOWS);
  const api = new Api(app, API_PREFIX);
  const served: BuiltApp['served'] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') served.push({ method, url: route.url });
  });

  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES },
    (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({ message: `Route ${request.method} ${pathOnly(request.url)} not found.` });
  });
  app.addHook('onRequest', async (request, reply) => {
    void reply.header('X-Request-Id', request.id);
  });
  registerCors(app, ctx.config.corsOrigins);
  app.addHook('onRequest', authHook({ accountForKey: (k) => ctx.repos.accounts.accountForKey(k), limiter, clock: ctx.clock }));
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unknown';
    metrics.httpDuration.observe({ method: request.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    if (reply.statusCode === 429) metrics.rateLimited.inc();
    // The one line per request: the path without its query string (see requestForLog).
    request.log.info(
      {
        method: request.method,
        route,
        path: pathOnly(request.url),
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 10) / 10,
        remoteAddress: request.ip,
      },
      'request',
    );
  });

  // Live (/healthz) apart from ready (/readyz): a draining node is alive but takes no new calls.
  registerHealthRoutes(app, () => ({ draining: ctx.readiness?.().draining ?? false }));
  app.get('/metrics', async (_req, reply) => {
    void reply.header('Content-Type', metrics.registry.contentType);
    return metrics.registry.metrics();
  });

  await registerRoutes(api, ctx);

  // Built on first request, once every route is registered; the routes never change after.
  let document: ReturnType<typeof openApiDocument> | undefined;
  app.get(`${API_PREFIX}/openapi.json`, async () =>
    (document ??= openApiDocument(api, { title: 'Switchboard API', version: '1.0.0', serverUrl: `${ctx.config.publicUrl}${API_PREFIX}` })),
  );
  registerDocsRoutes(app, API_PREFIX, ctx.config.publicUrl);
  const console = registerConsoleRoutes(app);
  return { app, api, metrics, served, console };
}
