/**
 * The console's only way to the engine: the public REST API under /api, same origin, with the
 * account's key in the Authorization header (never in a URL). Errors keep the API's own body so
 * pages can show its validation messages beside the fields they name.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(messageOf(body) ?? `HTTP ${status}`);
  }

  /** The API's per-field validation messages (422 `{message, errors: {field: [messages]}}`). */
  get fieldErrors(): Record<string, string[]> {
    const errors = (this.body as { errors?: unknown } | null)?.errors;
    return errors && typeof errors === 'object' ? (errors as Record<string, string[]>) : {};
  }
}

function messageOf(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const b = body as { message?: unknown; error?: unknown };
  if (typeof b.message === 'string') return b.message;
  if (typeof b.error === 'string') return b.error;
  if (b.error && typeof b.error === 'object' && typeof (b.error as { message?: unknown }).message === 'string') {
    return (b.error as { message: string }).message;
  }
  return undefined;
}

export interface Api {
  get<T = unknown>(path: string, signal?: AbortSignal): Promise<T>;
  post<T = unknown>(path: string, body?: unknown): Promise<T>;
  put<T = unknown>(path: string, body?: unknown): Promise<T>;
  del<T = unknown>(path: string): Promise<T>;
  /** A binary resource (recordings, voice previews), read whole. */
  blob(path: string, signal?: AbortSignal): Promise<Blob>;
  /** The raw response of a long-lived request (event streams); the caller reads its body. */
  open(path: string, signal: AbortSignal): Promise<Response>;
}

export const API_BASE = '/api';
const MAX_429_RETRIES = 2;
const MAX_429_WAIT_S = 10;

/** Paths are relative to /api (`/user/calls`); a full `/api/...` path is taken as is. */
export function createApi(key: string, onUnauthorized: () => void = () => {}): Api {
  const url = (path: string) => (path.startsWith(API_BASE + '/') ? path : API_BASE + path);
  const headers = (json: boolean): Record<string, string> => ({
    authorization: `Bearer ${key}`,
    ...(json ? { 'content-type': 'application/json' } : {}),
  });
  async function send(method: string, path: string, body?: unknown, signal?: AbortSignal, retries = MAX_429_RETRIES): Promise<Response> {
    const res = await fetch(url(path), {
      method,
      headers: headers(body !== undefined),
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      ...(signal ? { signal } : {}),
      credentials: 'omit',
      cache: 'no-store',
    });
    if (res.status === 401) onUnauthorized();
    // Reads wait out the per-key rate limit (the API says how long) rather than fail a page.
    if (res.status === 429 && method === 'GET' && retries > 0) {
      const waitS = Math.min(Number(res.headers.get('retry-after')) || 1, MAX_429_WAIT_S);
      await res.body?.cancel();
      await new Promise((r) => setTimeout(r, waitS * 1000));
      if (!signal?.aborted) return send(method, path, body, signal, retries - 1);
    }
    if (!res.ok) {
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      throw new ApiError(res.status, parsed);
    }
    return res;
  }
  async function json<T>(res: Response): Promise<T> {
    const text = await res.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }
  return {
    get: async (path, signal) => json(await send('GET', path, undefined, signal)),
    post: async (path, body) => json(await send('POST', path, body ?? {})),
    put: async (path, body) => json(await send('PUT', path, body ?? {})),
    del: async (path) => json(await send('DELETE', path)),
    blob: async (path, signal) => (await send('GET', path, undefined, signal)).blob(),
    open: (path, signal) => send('GET', path, undefined, signal),
  };
}
