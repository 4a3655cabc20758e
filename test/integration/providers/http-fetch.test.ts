import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { httpFetch } from '../../../src/providers/http-fetch.ts';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  socket: number;
}

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = undefined;
});

/** A loopback server: `handle` answers; every request is recorded with the socket it came on. */
async function serve(handle: (req: http.IncomingMessage, res: http.ServerResponse, seen: Seen) => void): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const sockets = new WeakMap<object, number>();
  let nextSocket = 0;
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (!sockets.has(req.socket)) sockets.set(req.socket, ++nextSocket);
      const s: Seen = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString(), socket: sockets.get(req.socket)! };
      seen.push(s);
      handle(req, res, s);
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, seen };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('httpFetch (the OpenAI clients’ fetch)', () => {
  it('sends method, headers and body; answers with status, headers and the body as it streams; reuses the connection', async () => {
    let release!: () => void;
    const more = new Promise<void>((r) => (release = r));
    const { url, seen } = await serve((req, res) => {
      res.writeHead(201, 'Made', [['content-type', 'text/plain'], ['x-many', 'a'], ['x-many', 'b']]);
      res.write('first ');
      void more.then(() => res.end('second'));
    });
    const res = await httpFetch(`${url}/v1/things?x=1`, { method: 'post', headers: new Headers({ Authorization: 'Bearer k', 'Content-Type': 'application/json' }), body: '{"a":1}' });
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/things?x=1', body: '{"a":1}' });
    expect(seen[0]!.headers).toMatchObject({ authorization: 'Bearer k', 'content-type': 'application/json' });
    expect(seen[0]!.headers['accept-encoding']).toBeUndefined();
    expect([res.status, res.statusText, res.ok]).toEqual([201, 'Made', true]);
    expect(res.headers.get('x-many')).toBe('a, b');
    // The first chunk is readable before the server has ended the body.
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('first ');
    release();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    expect(rest).toBe('second');

    const again = await httpFetch(`${url}/v1/other`, { method: 'PUT', headers: [['x-pair', '1']], body: new TextEncoder().encode('bytes') });
    expect(await again.text()).toBe('first second');
    expect(seen[1]).toMatchObject({ method: 'PUT', body: 'bytes', socket: seen[0]!.socket });
    expect(seen[1]!.headers).toMatchObject({ 'x-pair': '1', 'content-length': '5' });
    expect(seen[1]!.headers['transfer-encoding']).toBeUndefined();
    // As fetch: a GET cannot have a body.
    await expect(httpFetch(url, { body: 'x' })).rejects.toThrow(TypeError);
  });

  it('a 204 has no body; an error status comes back as a response, not a failure', async () => {
    const { url } = await serve((req, res) => {
      if (req.url === '/none') res.writeHead(204).end();
      else res.writeHead(429, { 'content-type': 'application/json' }).end('{"error":{"message":"slow down"}}');
    });
    const none = await httpFetch(`${url}/none`, { method: 'DELETE' });
    expect([none.status, none.body]).toEqual([204, null]);
    const busy = await httpFetch(`${url}/busy`);
    expect([busy.status, busy.ok]).toEqual([429, false]);
    expect(await busy.json()).toEqual({ error: { message: 'slow down' } });
  });

  it('a refused connection is TypeError("fetch failed") with the cause, as fetch reports it', async () => {
    const { url } = await serve(() => {});
    const port = new URL(url).port;
    server!.close();
    server = undefined;
    const error = await httpFetch(`http://127.0.0.1:${port}/`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe('fetch failed');
    expect(((error as TypeError).cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
  });

  it('an abort before the answer, while waiting for it, and during the body ends each with an AbortError', async () => {
    let hold!: http.ServerResponse;
    const { url } = await serve((req, res) => {
      if (req.url === '/slow') {
        hold = res;
        return;
      }
      res.writeHead(200);
      res.write('part');
    });
    const early = new AbortController();
    early.abort();
    expect(await httpFetch(url, { signal: early.signal }).catch((e: DOMException) => e.name)).toBe('AbortError');

    const waiting = new AbortController();
    const pending = httpFetch(`${url}/slow`, { signal: waiting.signal });
    await sleep(50);
    waiting.abort();
    expect(await pending.catch((e: DOMException) => e.name)).toBe('AbortError');
    await sleep(20);
    expect(hold.destroyed || hold.socket?.destroyed).toBe(true);

    const reading = new AbortController();
    const res = await httpFetch(`${url}/body`, { signal: reading.signal });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('part');
    reading.abort();
    expect(await reader.read().catch((e: DOMException) => e.name)).toBe('AbortError');
  });

  it('an answer a Response cannot hold, or a bad header or URL from the caller, rejects with a TypeError and nothing throws', async () => {
    // A raw server: a status text with a control character. Node's parser lets it through; a
    // Response refuses it (before the mend this threw out of the socket's event handler).
    const raw = net.createServer((socket) => {
      socket.once('data', () => socket.end('HTTP/1.1 200 Fine\x7f\r\ncontent-length: 2\r\n\r\nok'));
    });
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
    try {
      const port = (raw.address() as AddressInfo).port;
      const odd = (await httpFetch(`http://127.0.0.1:${port}/`).catch((e: unknown) => e)) as TypeError;
      expect(odd).toBeInstanceOf(TypeError);
      expect([odd.message, (odd.cause as Error).message]).toEqual(['fetch failed', 'Invalid statusText']);
      await expect(httpFetch(`http://127.0.0.1:${port}/`, { headers: { 'x-bad': 'a\nb' } })).rejects.toThrow(TypeError);
      await expect(httpFetch('http://[::1')).rejects.toThrow(TypeError);
    } finally {
      await new Promise((r) => raw.close(r));
    }
  });

  it('a body it does not send itself (multipart) goes through the global fetch', async () => {
    const { url, seen } = await serve((req, res) => res.end('ok'));
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array([1, 2, 3])]), 'a.wav');
    expect(await (await httpFetch(url, { method: 'POST', body: form })).text()).toBe('ok');
    expect(seen[0]!.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(seen[0]!.body).toContain('filename="a.wav"');
  });

  it('carries the OpenAI client: a streamed chat completion, and its errors mapped as with fetch', async () => {
    const { url } = await serve((req, res) => {
      if (req.url === '/v1/models/gone') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no such model","type":"invalid_request_error"}}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const piece of ['Hel', 'lo']) res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`);
      res.end('data: [DONE]\n\n');
    });
    const client = new OpenAI({ apiKey: 'k', baseURL: `${url}/v1`, maxRetries: 0, fetch: httpFetch });
    const stream = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Hello');
    const error = await client.models.retrieve('gone').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    const aborted = new AbortController();
    aborted.abort();
    const abortError = await client.models.retrieve('x', { signal: aborted.signal }).catch((e: unknown) => e);
    expect(abortError).toBeInstanceOf(OpenAI.APIUserAbortError);
  });
});
