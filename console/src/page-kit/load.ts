import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api.ts';

/**
 * Loads what a page shows: `data` once there, `error` as the API's message, `reload()` after a
 * change. A newer load (deps changed, reload) wins over an older one still in flight.
 */
export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload(): void;
}

export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const depsKey = JSON.stringify(deps);
  const [shownFor, setShownFor] = useState(depsKey);
  // Other deps (another id): what was shown belongs to them, so it goes; a reload keeps it meanwhile.
  if (shownFor !== depsKey) {
    setShownFor(depsKey);
    setState({ loading: true });
  }
  useEffect(() => {
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    load(controller.signal).then(
      (data) => {
        if (!controller.signal.aborted) setState({ data, loading: false });
      },
      (err: unknown) => {
        if (!controller.signal.aborted) setState({ error: messageOf(err), loading: false });
      },
    );
    return () => controller.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  return { data: state.data, error: state.error, loading: state.loading, reload: () => setTick((n) => n + 1) };
}

export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  return err instanceof Error ? err.message : String(err);
}

/** `2026-11-29T03:20:00.000Z` → local date and time, minutes precision. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
