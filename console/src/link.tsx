import type { ComponentChildren } from 'preact';
import { BASE, navigate } from './router.ts';

/** A real <a href> (keyboard, middle-click, copy link) that navigates in place on a plain click. */
export function Link(props: { to: string; children: ComponentChildren; class?: string; 'aria-current'?: 'page' }) {
  return (
    <a
      href={BASE + props.to}
      class={props.class}
      aria-current={props['aria-current']}
      onClick={(e) => {
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(props.to);
      }}
    >
      {props.children}
    </a>
  );
}
