/** JSON column helpers: the store keeps JSON as text; repositories parse it at the boundary. */
export function toJson(value: unknown): string {
  return JSON.stringify(value);
}

export function fromJson<T>(text: string | null | undefined, fallback: T): T {
  if (text == null) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

export const flag = (b: boolean | undefined): number => (b ? 1 : 0);
export const iso = (ms: number | null | undefined): string | null => (ms == null ? null : new Date(ms).toISOString());
