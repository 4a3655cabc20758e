import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { buildConsole, type ConsoleAssets } from './build.ts';

/**
 * GET /console and every /console/* page: the web console, same origin as the API. The page is
 * one HTML shell; the app script and stylesheet come from /console/assets/. The policy allows
 * scripts, styles and connections from this origin only (WebSocket signalling included), media
 * and images also from blob: (recordings and waveforms the page decodes itself), and nothing
 * inline. The page holds no data: everything it shows it fetches with the signed-in key.
 */

export const CONSOLE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export interface ConsoleRoutes {
  /** Builds the assets now rather than on the first request (the engine calls it at start). */
  warm(): Promise<void>;
}

export function registerConsoleRoutes(app: FastifyInstance, build: () => Promise<ConsoleAssets> = buildConsole): ConsoleRoutes {
  let assets: Promise<ConsoleAssets & { etag: string }> | undefined;
  const load = () => {
    assets ??= build().then((a) => ({
      ...a,
      etag: `"${crypto.createHash('sha256').update(a.js).update(a.css).update(a.html).digest('base64url').slice(0, 16)}"`,
    }));
    assets.catch(() => (assets = undefined));
    return assets;
  };
  const secure = (reply: FastifyReply, type: string) =>
    reply
      .header('Content-Type', type)
      .header('Content-Security-Policy', CONSOLE_POLICY)
      .header('X-Content-Type-Options', 'nosniff')
      .header('Referrer-Policy', 'no-referrer')
      .header('X-Frame-Options', 'DENY')
      .header('Permissions-Policy', 'microphone=(self), camera=(), geolocation=()');

  const page = async (_req: unknown, reply: FastifyReply) => {
    const a = await load();
    secure(reply, 'text/html; charset=utf-8').header('Cache-Control', 'no-cache');
    return a.html;
  };
  app.get('/console', page);
  app.get('/console/*', async (request, reply) => {
    const rest = (request.params as { '*': string })['*'];
    if (rest.startsWith('assets/')) {
      const a = await load();
      const file = rest.slice('assets/'.length);
      const asset = file === 'app.js' ? { body: a.js, type: 'text/javascript; charset=utf-8' } : file === 'app.css' ? { body: a.css, type: 'text/css; charset=utf-8' } : undefined;
      if (!asset) return reply.code(404).send({ message: `Route GET /console/${rest} not found.` });
      secure(reply, asset.type).header('Cache-Control', 'no-cache').header('ETag', a.etag);
      if (request.headers['if-none-match'] === a.etag) return reply.code(304).send();
      return asset.body;
    }
    return page(request, reply);
  });
  return {
    async warm() {
      await load();
    },
  };
}
