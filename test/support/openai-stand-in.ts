import type http from 'node:http';
import { listen, readBody } from './http-util.ts';

export interface ScriptedToolCall {
  name: string;
  arguments: Record<string, unknown> | string;
  id?: string;
}

/** One scripted answer of the stand-in model. */
export interface Scripted {
  content?: string;
  toolCalls?: ScriptedToolCall[];
  /** Answer with this HTTP status and an OpenAI-style error body instead. */
  status?: number;
  /** With `status`: the error body's message (default "scripted failure <status>"). */
  errorMessage?: string;
  /** Streaming only: send this many chunks, then cut the connection. */
  failAfterChunks?: number;
  /** Wait before answering (to let concurrent requests pile up). */
  delayMs?: number;
  /** Streaming only: send this many chunks, then go silent with the connection held open. */
  stallAfterChunks?: number;
}

export interface RecordedRequest {
  model: string;
  stream: boolean;
  messages: { role: string; content: string | null; tool_calls?: unknown[]; tool_call_id?: string }[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
  temperature?: number;
  authorization?: string;
  /** The W3C trace context header the request came with, if any. */
  traceparent?: string;
}

/**
 * A stand-in for an OpenAI-protocol server: POST /v1/chat/completions answers from a script
 * (queue first, then `responder`, then a default), streamed as SSE chunks with content and
 * tool_calls deltas exactly as the real service splits them, or as one JSON body.
 */
export class OpenAiStandIn {
  readonly requests: RecordedRequest[] = [];
  private readonly queue: Scripted[] = [];
  responder: ((req: RecordedRequest) => Scripted | undefined) | undefined;
  defaultResponse: Scripted = { content: 'Hello from the stand-in.' };
  private server!: { url: string; close(): Promise<void> };

  static async start(): Promise<OpenAiStandIn> {
    const s = new OpenAiStandIn();
    s.server = await listen((req, res) => void s.handle(req, res));
    return s;
  }

  /** What OPENAI_BASE_URL should be. */
  get baseUrl(): string {
    return `${this.server.url}/v1`;
  }

  enqueue(...responses: Scripted[]): this {
    this.queue.push(...responses);
    return this;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method !== 'POST' || !req.url?.startsWith('/v1/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    const body = JSON.parse(await readBody(req)) as RecordedRequest;
    body.authorization = req.headers.authorization;
    if (typeof req.headers.traceparent === 'string') body.traceparent = req.headers.traceparent;
    this.requests.push(body);
    const script = this.queue.shift() ?? this.responder?.(body) ?? this.defaultResponse;
    if (script.delayMs) await new Promise((r) => setTimeout(r, script.delayMs));
    if (script.status) {
      res.writeHead(script.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: script.errorMessage ?? `scripted failure ${script.status}`, type: 'server_error' } }));
      return;
    }
    const id = `chatcmpl-${this.requests.length}`;
    const toolCalls = (script.toolCalls ?? []).map((t, i) => ({
      id: t.id ?? `call_${this.requests.length}_${i}`,
      name: t.name,
      arguments: typeof t.arguments === 'string' ? t.arguments : JSON.stringify(t.arguments),
    }));
    const finish = toolCalls.length > 0 ? 'tool_calls' : 'stop';
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created: 1,
          model: body.model,
          choices: [
            {
              index: 0,
              finish_reason: finish,
              message: {
                role: 'assistant',
                content: script.content ?? null,
                ...(toolCalls.length > 0
                  ? { tool_calls: toolCalls.map((t) => ({ id: t.id, type: 'function', function: { name: t.name, arguments: t.arguments } })) }
                  : {}),
              },
            },
          ],
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const chunks: Record<string, unknown>[] = [{ role: 'assistant', content: '' }];
    for (const piece of (script.content ?? '').match(/.{1,6}/gs) ?? []) chunks.push({ content: piece });
    toolCalls.forEach((t, index) => {
      // Like the real service: id and name first, then the arguments in pieces.
      chunks.push({ tool_calls: [{ index, id: t.id, type: 'function', function: { name: t.name, arguments: '' } }] });
      const half = Math.ceil(t.arguments.length / 2);
      for (const part of [t.arguments.slice(0, half), t.arguments.slice(half)]) {
        if (part) chunks.push({ tool_calls: [{ index, function: { arguments: part } }] });
      }
    });
    // Destroying a socket drops unflushed writes: wait for each chunk to leave, then give the
    // client a moment to read it, so "mid-stream" really is after those chunks arrived.
    const cut = async () => {
      await new Promise((r) => setTimeout(r, 30));
      res.socket?.destroy();
    };
    // Holds the connection open without another byte until the client gives up.
    const stall = () => new Promise<void>((r) => res.once('close', () => r()));
    let sent = 0;
    for (const delta of chunks) {
      if (script.failAfterChunks !== undefined && sent >= script.failAfterChunks) return cut();
      if (script.stallAfterChunks !== undefined && sent >= script.stallAfterChunks) return stall();
      const line = `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
      await new Promise<void>((r) => res.write(line, () => r()));
      sent++;
    }
    if (script.failAfterChunks !== undefined) return cut();
    if (script.stallAfterChunks !== undefined) return stall();
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta: {}, finish_reason: finish }] })}\n\n`);
    res.end('data: [DONE]\n\n');
  }
}
