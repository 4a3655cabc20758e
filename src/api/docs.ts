import fs from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * GET /api/docs: the API reference, rendered in the browser by Swagger UI from /api/openapi.json.
 * Everything comes from this engine (swagger-ui-dist from node_modules, our own initializer), so
 * the page works offline and under a Content-Security-Policy that runs no inline script. Like the
 * document itself the page is public: it shows what the API accepts, never an account's data.
 */

/** The swagger-ui-dist files the page uses, with their media types; nothing else is served. */
const ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

const PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Switchboard API reference</title>
    <link rel="stylesheet" href="docs/assets/swagger-ui.css">
    <link rel="stylesheet" href="docs/assets/index.css">
    <link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png" sizes="32x32">
    <link rel="icon" type="image/png" href="docs/assets/favicon-16x16.png" sizes="16x16">
  </head>
  <body>
    <noscript>This page needs JavaScript. The document it renders is <a href="openapi.json">openapi.json</a>.</noscript>
    <div id="swagger-ui"></div>
    <script src="docs/assets/swagger-ui-bundle.js"></script>
    <script src="docs/init.js"></script>
  </body>
</html>
`;

/**
 * The initializer, a file of its own so the policy needs no 'unsafe-inline' for scripts. URLs are
 * relative to the page (/api/docs), so a path prefix added by a proxy keeps working. No validator
 * (it would send the document to validator.swagger.io), no top bar (it loads arbitrary URLs).
 */
const INIT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: 'openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    persistAuthorization: false,
  });
});
`;

/**
 * Scripts from this origin only, never inline; styles may be inline because Swagger UI sets
 * style attributes and injects style elements while rendering (no script can run through them);
 * images from here or data: URIs (its icons are inlined SVG in the stylesheet). "Try it out"
 * sends requests to the document's server, which is this origin unless SWITCHBOARD_PUBLIC_URL
 * names another.
 */
export function docsPolicy(publicUrl: string): string {
  let connect = "'self'";
  try {
    connect += ` ${new URL(publicUrl).origin}`;
  } catch {
    // publicUrl is validated by the config; a bad one only narrows the policy.
  }
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src ${connect}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function assetDir(): string {
  const require = createRequire(import.meta.url);
  return path.dirname(require.resolve('swagger-ui-dist/package.json'));
}

export function registerDocsRoutes(app: FastifyInstance, prefix: string, publicUrl: string): void {
  const policy = docsPolicy(publicUrl);
  const dir = assetDir();
  /** Each file read once, on its first request (the bundle is about 1.5 MB). */
  const cache = new Map<string, Promise<Buffer>>();
  const secure = (reply: FastifyReply, type: string) =>
    reply
      .header('Content-Type', type)
      .header('Content-Security-Policy', policy)
      .header('X-Content-Type-Options', 'nosniff')
      .header('Referrer-Policy', 'no-referrer');

  app.get(`${prefix}/docs`, async (_request, reply) => {
    secure(reply, 'text/html; charset=utf-8').header('Cache-Control', 'no-cache');
    return PAGE;
  });
  app.get(`${prefix}/docs/init.js`, async (_request, reply) => {
    secure(reply, 'text/javascript; charset=utf-8').header('Cache-Control', 'no-cache');
    return INIT;
  });
  app.get<{ Params: { file: string } }>(`${prefix}/docs/assets/:file`, async (request, reply) => {
    const { file } = request.params;
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (!type) return reply.code(404).send({ message: `Route GET ${prefix}/docs/assets/${file} not found.` });
    let bytes = cache.get(file);
    if (!bytes) {
      bytes = fs.readFile(path.join(dir, file));
      cache.set(file, bytes);
      bytes.catch(() => cache.delete(file));
    }
    secure(reply, type).header('Cache-Control', 'public, max-age=3600');
    return bytes;
  });
}
