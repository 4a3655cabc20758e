import type http from 'node:http';
import { listen, readBody } from './http-util.ts';

export interface Delivery {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The status the sink answered with. */
  status: number;
}

/**
 * Records every request (webhook deliveries, custom tool calls). Can fail the first N requests
 * with 500, or answer through a custom responder.
 */
export class HttpSink {
  readonly received: Delivery[] = [];
  failFirst = 0;
  /** Wait this long before answering (slow endpoints, timeouts). */
  delayMs = 0;
  responder: ((d: Omit<Delivery, 'status'>) => { status: number; body: unknown; headers?: Record<string, string> } | undefined) | undefined;
  private server!: { url: string; port: number; close(): Promise<void> };

  /** On 127.0.0.1 and a free port, unless told otherwise (another loopback address, a given port). */
  static async start(at: { host?: string; port?: number } = {}): Promise<HttpSink> {
    const s = new HttpSink();
    s.server = await listen((req, res) => void s.handle(req, res), at);
    return s;
  }

  get url(): string {
    return this.server.url;
  }

  get port(): number {
    return this.server.port;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const d = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: await readBody(req) };
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    if (res.destroyed) {
      this.received.push({ ...d, status: 0 });
      return;
    }
    let status = 200;
    let body: unknown = { ok: true };
    let headers: Record<string, string> = {};
    if (this.failFirst > 0) {
      this.failFirst--;
      status = 500;
      body = { error: 'scripted failure' };
    } else {
      const custom = this.responder?.(d);
      if (custom) ({ status, body, headers = {} } = custom);
    }
    this.received.push({ ...d, status });
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  }
}
