import { createApi, type Api } from './api.ts';

/**
 * The signed-in key lives in sessionStorage: gone when the tab closes, never in a URL, a cookie
 * or a log. Signing in checks the key against the API before keeping it.
 */

const KEY = 'switchboard.apiKey';

export function storedKey(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export async function signIn(key: string): Promise<Api> {
  const trimmed = key.trim();
  if (!trimmed) throw new Error('Enter an API key.');
  const api = createApi(trimmed);
  await api.get('/user/assistants?limit=1');
  sessionStorage.setItem(KEY, trimmed);
  return api;
}

export function signOut(): void {
  sessionStorage.removeItem(KEY);
}
