/**
 * One OPENAI_BASE_URL for two stand-ins: the engine has a single OpenAI base URL (chat, speech,
 * transcription), while the chat-completions and audio stand-ins are separate servers. This
 * forwards by path and streams both ways unbuffered, so SSE tokens and chunked PCM keep their
 * timing (the latency the engine sees is the stand-ins' own).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export class OpenAiRouter {
  private constructor(private readonly server: http.Server) {}

  /** `routes`: path prefix (under /v1) → base URL ending in /v1. */
  static async start(routes: Record<string, string>): Promise<OpenAiRouter> {
    const table = Object.entries(routes).map(([prefix, base]) => ({ prefix: `/v1${prefix}`, target: new URL(base) }));
    const server = http.createServer((req, res) => {
      const path = req.url ?? '/';
      const route = table.find((r) => path.startsWith(r.prefix));
      if (!route) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no stand-in for ${path}` } }));
        return;
      }
      const upstream = http.request(
        {
          host: route.target.hostname,
          port: route.target.port,
          method: req.method,
          path: route.target.pathname.replace(/\/v1$/, '') + path,
          headers: { ...req.headers, host: route.target.host },
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      // The engine aborting a request (barge-in) must reach the stand-in as a closed connection.
      res.on('close', () => {
        if (!res.writableFinished) upstream.destroy();
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new OpenAiRouter(server);
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
