import { validateJson, isObject } from './json-schema.ts';
import type { AgentTool, CustomToolDef } from './types.ts';

/** What the model sees of a tool's answer; long bodies are cut so they cannot flood the context. */
const MAX_RESULT_CHARS = 16_000;
const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_TIMEOUT_MS = 60_000;

/** Function names the OpenAI protocol accepts. */
export function toolName(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
  return cleaned.length > 0 ? cleaned : 'tool';
}

/**
 * A custom mid-call tool: arguments are checked against its JSON Schema, then sent to its
 * endpoint (query string for GET, JSON body otherwise). Every failure becomes a result object
 * with an `error`, so the model can tell the customer instead of the turn failing.
 */
export function httpTool(def: CustomToolDef, name: string, fetchImpl: typeof fetch): AgentTool {
  const parameters = isObject(def.parameters) && Object.keys(def.parameters).length > 0 ? def.parameters : { type: 'object', properties: {} };
  return {
    spec: { name, description: def.description, parameters },
    async run(args, signal) {
      const problems = validateJson(parameters, args);
      if (problems.length > 0) return { error: `Invalid arguments: ${problems.join('; ')}` };
      const timeoutMs = Math.min(def.timeout_ms > 0 ? def.timeout_ms : DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS);
      const timeout = AbortSignal.timeout(timeoutMs);
      const method = (def.method || 'POST').toUpperCase();
      let url = def.endpoint;
      const init: RequestInit = {
        method,
        headers: { accept: 'application/json', ...def.headers },
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      };
      if (method === 'GET' || method === 'DELETE') {
        const u = new URL(url);
        for (const [k, v] of Object.entries(args)) u.searchParams.set(k, typeof v === 'string' ? v : JSON.stringify(v));
        url = u.toString();
      } else {
        init.body = JSON.stringify(args);
        (init.headers as Record<string, string>)['content-type'] = 'application/json';
      }
      let res: Response;
      let text: string;
      try {
        res = await fetchImpl(url, init);
        text = await res.text();
      } catch (err) {
        if (signal?.aborted) throw err;
        if (timeout.aborted) return { error: `The tool did not answer within ${timeoutMs} ms.` };
        return { error: `The tool could not be reached: ${(err as Error).message}` };
      }
      const body = parseBody(text);
      if (!res.ok) return { error: `The tool answered HTTP ${res.status}.`, status: res.status, ...(body === undefined ? {} : { body }) };
      if (isObject(body)) return body;
      return body === undefined ? { ok: true } : { result: body };
    },
  };
}

function parseBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  const cut = text.length > MAX_RESULT_CHARS ? text.slice(0, MAX_RESULT_CHARS) : text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return cut;
  }
}
