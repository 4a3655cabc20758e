/**
 * The `fetch` the OpenAI clients are given (their `fetch` option): the request goes out through
 * `node:http`/`node:https` on keep-alive agents, and the answer comes back as a standard
 * `Response` over the socket's stream. Node's own fetch (undici's WHATWG implementation) runs
 * every request through the spec's machinery: request and response objects cloned and checked,
 * the body turned into a stream and pumped, a controller per fetch. At 100 pipeline calls that
 * was 8 % of the event-loop thread for about 40 requests a second (a reply's chat completion and
 * its sentences' speech), more than the requests' own parsing (docs/bench-history.md, 2026-11-27 10:45).
 *
 * Only what the clients send to JSON endpoints takes this path: a string or byte body (or none)
 * to an http(s) URL. Anything else (a multipart upload, a stream body, a Request object) goes to
 * the global fetch unchanged. The answer is what fetch gives for such a request: the status and
 * headers, a body stream, a network failure as `TypeError('fetch failed')` with the cause, an
 * aborted signal as the signal's reason (an `AbortError` by default), on the request or later on
 * the body. No redirects are followed (the API does not send them; a 3xx comes back as it is) and
 * no `Accept-Encoding` is added, so bodies arrive as sent. With tracing on, every request carries
 * the active span's W3C `traceparent` (src/telemetry).
 */
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { injectTraceHeaders, withTraceHeaders } from '../telemetry/spans.ts';

const agents = {
  'http:': new http.Agent({ keepAlive: true }),
  'https:': new https.Agent({ keepAlive: true }),
} as const;

/** Statuses whose response has no body (a `Response` refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

function headerRecord(init: ConstructorParameters<typeof Headers>[0]): Record<string, string> {
  const out: Record<string, string> = {};
  if (!init) return out;
  // Headers, an array of pairs or a record: Headers normalizes all three (and joins repeats).
  new Headers(init).forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

export const httpFetch: typeof fetch = nodeFetch((protocol) => agents[protocol], (input, init) => fetch(input, withTraceHeaders(init)));

/**
 * A fetch over `node:http`/`node:https` through the agents `agentFor` gives (undefined for a
 * protocol: not this path); whatever does not take this path goes to `fallback`.
 */
export function nodeFetch(agentFor: (protocol: 'http:' | 'https:') => http.Agent | undefined, fallback: typeof fetch): typeof fetch {
  return (input, init) => {
    const body = init?.body;
    const plainBody = body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
    const href = typeof input === 'string' ? input : input instanceof URL ? input.href : undefined;
    // Anything unusual, an unparsable URL included, is the fallback's to answer (or refuse).
    if (href === undefined || !plainBody || !URL.canParse(href)) return fallback(input, init);
    const url = new URL(href);
    const agent = url.protocol === 'http:' || url.protocol === 'https:' ? agentFor(url.protocol) : undefined;
    if (!agent) return fallback(input, init);
    const signal = init?.signal ?? undefined;
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const method = (init?.method ?? 'GET').toUpperCase();
    // fetch refuses these itself (a TypeError); let it say so.
    if ((method === 'GET' || method === 'HEAD') && body != null) return fallback(input, init);
    // Inside the executor, so a bad header (from the caller or the server) rejects, never throws.
    return new Promise<Response>((resolve, reject) => {
      const headers = headerRecord(init?.headers);
      // W3C `traceparent` for the active span (a provider request, a tool call, a webhook) when tracing is on.
      injectTraceHeaders(headers);
      // A body of known length goes with Content-Length, as fetch sends it, not chunked.
      if (body != null && headers['content-length'] === undefined) headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
      const request = (url.protocol === 'https:' ? https : http).request(url, { method, headers, agent });
      let response: http.IncomingMessage | undefined;
      const onAbort = (): void => {
        const reason = abortReason(signal!) as Error;
        // Before the answer the request fails with the reason; after it the body stream does.
        if (response) response.destroy(reason);
        else request.destroy(reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = (): void => signal?.removeEventListener('abort', onAbort);
      request.on('error', (error) => {
        done();
        if (response) return; // the body stream carries it
        reject(signal?.aborted ? abortReason(signal) : new TypeError('fetch failed', { cause: error }));
      });
      request.on('response', (res) => {
        response = res;
        res.on('close', done);
        // The body stream takes a failure (an abort: the signal's reason, as with fetch) from here.
        res.on('error', () => {});
        try {
          resolve(toResponse(res, method));
        } catch (error) {
          // An answer a Response cannot hold (a status outside 200-599, a status text or header
          // it refuses) is a failed fetch, as undici reports it; it must not throw into the socket.
          res.destroy();
          reject(new TypeError('fetch failed', { cause: error }));
        }
      });
      request.end(body ?? undefined);
    });
  };
}

function toResponse(res: http.IncomingMessage, method: string): Response {
  const status = res.statusCode ?? 0;
  if (status < 200 || status > 599) throw new Error(`unexpected HTTP status ${status}`);
  const headers = new Headers();
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  const response = new Response(NULL_BODY.has(status) || method === 'HEAD' ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
    status,
    statusText: res.statusMessage ?? '',
    headers,
  });
  if (response.body === null) res.resume();
  return response;
}
