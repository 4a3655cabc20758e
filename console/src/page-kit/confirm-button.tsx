import { useEffect, useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';

/**
 * A destructive action behind a second, explicit step: the first button shows the question with
 * "confirm" and "cancel" buttons in place (keyboard reachable, no modal to trap focus in).
 */
export function ConfirmButton(props: {
  /** The accessible name (`Delete trunk Main line`); `text` is what shows, when shorter. */
  label: string;
  text?: string;
  question: ComponentChildren;
  confirmLabel: string;
  onConfirm(): Promise<void> | void;
  danger?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const confirm = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirm.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <button type="button" class={props.danger ? 'danger' : undefined} aria-label={props.text ? props.label : undefined} onClick={() => setAsking(true)}>
        {props.text ?? props.label}
      </button>
    );
  }
  return (
    <span class="confirm" role="group" aria-label={props.label}>
      <span class="confirm-question">{props.question}</span>
      <button
        type="button"
        class={props.danger ? 'danger' : 'primary'}
        disabled={busy}
        ref={confirm}
        onClick={async () => {
          setBusy(true);
          try {
            await props.onConfirm();
          } finally {
            setBusy(false);
            setAsking(false);
          }
        }}
      >
        {props.confirmLabel}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
