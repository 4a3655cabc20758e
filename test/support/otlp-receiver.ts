/**
 * An OTLP/HTTP trace receiver on loopback, as a collector answers the JavaScript exporter:
 * `POST /v1/traces` with an `ExportTraceServiceRequest` in OTLP/JSON (`application/json`, what
 * @opentelemetry/exporter-trace-otlp-http sends; gzip-encoded bodies are inflated), answered
 * `200 {}` (an `ExportTraceServiceResponse` with nothing rejected). Protobuf bodies are refused
 * with 415, which is what a JSON-only receiver says: the exporter under test never sends them.
 *
 * Spans are decoded the way the OTLP/JSON mapping writes them: trace and span ids as hex,
 * times as decimal nanosecond strings, attributes as `{ key, value: { stringValue | intValue |
 * doubleValue | boolValue | arrayValue } }`, status codes 0 unset, 1 ok, 2 error.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export type AttrValue = string | number | boolean | AttrValue[] | undefined;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, AttrValue>;
  events: { name: string; timeNs: bigint; attributes: Record<string, AttrValue> }[];
  status: { code: number; message?: string };
  resource: Record<string, AttrValue>;
  scope: string;
}

export interface ReceivedExport {
  contentType: string;
  headers: http.IncomingHttpHeaders;
  spans: ReceivedSpan[];
}

const MAX_BODY = 16 * 1024 * 1024;

interface OtlpAnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpAnyValue[] };
}
interface OtlpKeyValue {
  key: string;
  value?: OtlpAnyValue;
}

function anyValue(v: OtlpAnyValue | undefined): AttrValue {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(anyValue);
  return undefined;
}

function attributes(list: OtlpKeyValue[] | undefined): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const kv of list ?? []) out[kv.key] = anyValue(kv.value);
  return out;
}

const HEX_ID = /^[0-9a-f]+$/;

function id(value: unknown, bytes: number, what: string): string {
  if (typeof value !== 'string' || value.length !== bytes * 2 || !HEX_ID.test(value)) throw new Error(`${what} is not ${bytes} bytes of lowercase hex: ${String(value)}`);
  return value;
}

/** An OTLP/JSON ExportTraceServiceRequest → spans; throws on what the mapping does not allow. */
export function decodeTraceRequest(body: unknown): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  const req = body as { resourceSpans?: { resource?: { attributes?: OtlpKeyValue[] }; scopeSpans?: { scope?: { name?: string }; spans?: any[] }[] }[] };
  if (!req || typeof req !== 'object' || !Array.isArray(req.resourceSpans)) throw new Error('no resourceSpans array');
  for (const rs of req.resourceSpans) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: id(s.traceId, 16, 'traceId'),
          spanId: id(s.spanId, 8, 'spanId'),
          parentSpanId: s.parentSpanId ? id(s.parentSpanId, 8, 'parentSpanId') : undefined,
          name: String(s.name),
          kind: Number(s.kind ?? 0),
          startNs: BigInt(s.startTimeUnixNano),
          endNs: BigInt(s.endTimeUnixNano),
          attributes: attributes(s.attributes),
          events: ((s.events ?? []) as { name: string; timeUnixNano: string; attributes?: OtlpKeyValue[] }[]).map((e) => ({
            name: e.name,
            timeNs: BigInt(e.timeUnixNano),
            attributes: attributes(e.attributes),
          })),
          status: { code: Number(s.status?.code ?? 0), ...(s.status?.message ? { message: String(s.status.message) } : {}) },
          resource,
          scope: ss.scope?.name ?? '',
        });
      }
    }
  }
  return out;
}

export class OtlpReceiver {
  readonly exports: ReceivedExport[] = [];
  /** Every request, the refused ones too (path, method, content type). */
  readonly requests: { method: string; path: string; contentType: string; status: number }[] = [];

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<OtlpReceiver> {
    const server = http.createServer();
    const rx = new OtlpReceiver(server);
    server.on('request', (req, res) => void rx.handle(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return rx;
  }

  /** For OTEL_EXPORTER_OTLP_ENDPOINT (the exporter appends /v1/traces). */
  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get spans(): ReceivedSpan[] {
    return this.exports.flatMap((e) => e.spans);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const contentType = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const reply = (status: number, body: unknown): void => {
      this.requests.push({ method: req.method ?? '', path: req.url ?? '', contentType, status });
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req as AsyncIterable<Buffer>) {
      size += c.length;
      if (size > MAX_BODY) return reply(413, { code: 8, message: 'body too large' });
      chunks.push(c);
    }
    if (req.method !== 'POST' || req.url !== '/v1/traces') return reply(404, { code: 5, message: 'not found' });
    if (contentType !== 'application/json') return reply(415, { code: 3, message: `unsupported content type ${contentType}` });
    try {
      let raw = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
      const spans = decodeTraceRequest(JSON.parse(raw.toString('utf8')));
      this.exports.push({ contentType, headers: req.headers, spans });
      reply(200, {});
    } catch (err) {
      reply(400, { code: 3, message: (err as Error).message });
    }
  }

  /** Waits until `done(spans)` holds (bounded). */
  async waitFor(done: (spans: ReceivedSpan[]) => boolean, timeoutMs = 10_000): Promise<ReceivedSpan[]> {
    const deadline = Date.now() + timeoutMs;
    while (!done(this.spans)) {
      if (Date.now() > deadline) throw new Error(`OTLP receiver: condition not met in ${timeoutMs} ms; spans: ${this.spans.map((s) => s.name).join(', ')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return this.spans;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
