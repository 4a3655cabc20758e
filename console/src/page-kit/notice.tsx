import type { ComponentChildren } from 'preact';

/** A status line read out by screen readers when it changes (saved, started, rotated). */
export function Notice(props: { kind?: 'ok' | 'error'; children: ComponentChildren; id?: string }) {
  const error = props.kind === 'error';
  return (
    <p id={props.id} class={error ? 'notice notice-error' : 'notice notice-ok'} role={error ? 'alert' : 'status'}>
      {props.children}
    </p>
  );
}

/** Loading and load-failure lines for a page section. */
export function LoadState(props: { loading: boolean; error: string | undefined; what: string }) {
  if (props.error) return <Notice kind="error">Could not load {props.what}: {props.error}</Notice>;
  if (props.loading) return <p class="hint" aria-live="polite">Loading {props.what}…</p>;
  return null;
}
